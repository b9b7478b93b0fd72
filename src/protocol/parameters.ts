/** A request or response parameter value (KServe v2 `parameters` entry). */
export type ParameterValue = string | number | bigint | boolean;
export type Parameters = Record<string, ParameterValue>;
