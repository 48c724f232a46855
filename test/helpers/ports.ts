/** A TCP port on 127.0.0.1 that was free a moment ago (one implementation, beside the Redis helpers). */
export { freePort } from "./redis.js";
