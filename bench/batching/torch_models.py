"""The two benchmark models as PyTorch modules, shared by make_models.py and fastapi_service.py.

Both scripts build the architecture here and the weights come from the state dict that
make_models.py saved, so the ONNX files (served by Nereid and the naive server) and the PyTorch
service compute the same function.
"""

import torch
from torch import nn

# name -> per-request input shape (no batch dimension) and output size
SHAPES = {
    "resnet18": {"input": [3, 224, 224], "output": [1000]},
    "mlp": {"input": [64], "output": [10]},
    # bench/hot-path.ts: a model that computes nothing, so that a request costs only the serving path
    "identity": {"input": [16], "output": [16]},
}


class Identity(nn.Module):
    """Returns its input (exported as one ONNX Identity node)."""

    def forward(self, x):
        return x.clone()



def build_model(name: str) -> nn.Module:
    """Returns the untrained architecture of `name` in eval mode."""
    if name == "resnet18":
        import torchvision  # imported here: the MLP service needs no torchvision

        model = torchvision.models.resnet18(weights=None)
    elif name == "mlp":
        model = nn.Sequential(
            nn.Linear(64, 256),
            nn.ReLU(),
            nn.Linear(256, 256),
            nn.ReLU(),
            nn.Linear(256, 10),
        )
    elif name == "identity":
        model = Identity()
    else:
        raise ValueError(f"unknown model '{name}'; expected one of {sorted(SHAPES)}")
    return model.eval()


def load_model(name: str, weights_path: str) -> nn.Module:
    """Builds `name` and loads the weights make_models.py saved."""
    model = build_model(name)
    model.load_state_dict(torch.load(weights_path, map_location="cpu"))
    return model.eval()
