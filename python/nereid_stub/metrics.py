"""pb_utils.MetricFamily and pb_utils.Metric: a model's own metrics on the server's /metrics.

The values live in the server (src/metrics/custom-metrics.ts), so every instance of a model that makes
the same family and labels shares one series, as in Triton; each call waits for the server's answer
and raises Triton's error (a COUNTER incremented by a negative value, a GAUGE observed...). A family
or metric that is garbage collected is deleted; the process's metrics all go when it ends.
"""

from . import server_api
from .errors import TritonModelException
from .text import text


class Metric:
    """One labelled series of a MetricFamily; made with ``family.Metric(labels=..., buckets=...)``."""

    def __init__(self, family, labels=None, buckets=None):
        if labels is not None and not isinstance(labels, dict):
            raise TritonModelException(f"Metric labels must be a dict of str to str, got {type(labels).__name__}")
        labels = {
            text(key, "Metric label name"): text(value, f"Metric label '{key}'") for key, value in (labels or {}).items()
        }
        if buckets is not None:
            buckets = [float(bound) for bound in buckets]
        self._family = family
        self._id = server_api.call("metric_new", "pb_utils.Metric", family=family._id, labels=labels, buckets=buckets)["id"]

    def increment(self, value):
        server_api.call("metric_increment", "Metric.increment", id=self._id, value=float(value))

    def set(self, value):
        server_api.call("metric_set", "Metric.set", id=self._id, value=float(value))

    def observe(self, value):
        server_api.call("metric_observe", "Metric.observe", id=self._id, value=float(value))

    def value(self):
        return server_api.call("metric_value", "Metric.value", id=self._id)["value"]

    def __del__(self):
        try:
            server_api.post("metric_delete", id=self._id)
        except Exception:
            pass


class MetricFamily:
    """A metric family: ``pb_utils.MetricFamily(name, description, kind)``, kind COUNTER, GAUGE or HISTOGRAM."""

    COUNTER = 0
    GAUGE = 1
    HISTOGRAM = 2

    def __init__(self, name, description, kind):
        self._name = text(name, "MetricFamily name")
        description = text(description, "MetricFamily description")
        self._id = server_api.call("metric_family_new", "pb_utils.MetricFamily", name=self._name, description=description, kind=kind)["id"]

    def Metric(self, labels=None, buckets=None):  # noqa: N802 (Triton's name)
        return Metric(self, labels, buckets)

    def __del__(self):
        try:
            server_api.post("metric_family_delete", id=self._id)
        except Exception:
            pass
