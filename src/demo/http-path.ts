/** Where the demo server answers Streamable HTTP, in every mode. */
export const DEMO_HTTP_PATH = "/mcp";
