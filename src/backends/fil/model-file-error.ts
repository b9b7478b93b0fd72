/**
 * What is wrong with a tree model file, in words that follow "model file '<path>' (<model_type>) ":
 * the backend adds the file and the type and fails the load with INVALID_ARG.
 */
export class ModelFileError extends Error {}
