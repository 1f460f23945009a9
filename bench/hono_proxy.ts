/**
 * Yardsticks between the bare proxy and the gateway: the bare proxy's forwarding inside a Hono app
 * with one route, with the answer streamed (`stream`) or, as the gateway's proxy does, read whole
 * with its headers filtered and the request sent with a deadline (`buffer`). They show which part
 * of the gap to the bare proxy is the framework, which the forwarding the gateway must do, and
 * which its checks.
 */
import { Hono } from "hono";
import { deadlineSignal } from "../src/lib/deadline.ts";

const [port, upstream, mode] = [Number(Deno.args[0]), Deno.args[1], Deno.args[2] ?? "stream"];
const app = new Hono();
app.get("/v1/accounts/:id/balances", async (c) => {
  const request = c.req.raw;
  const url = `${upstream}/psd2/v1/accounts/${c.req.param("id")}/balances`;
  if (mode === "stream") {
    const response = await fetch(url, { method: request.method, headers: request.headers });
    return new Response(response.body, { status: response.status, headers: response.headers });
  }
  const headers: [string, string][] = [];
  request.headers.forEach((value, name) => {
    if (name !== "host" && name !== "content-length") headers.push([name, value]);
  });
  headers.push(["x-forwarded-for", "127.0.0.1"], ["x-forwarded-proto", "http"]);
  const response = await fetch(url, {
    method: request.method,
    headers,
    redirect: "manual",
    signal: deadlineSignal(10_000),
  });
  const body = await response.bytes();
  const answer: [string, string][] = [];
  response.headers.forEach((value, name) => {
    if (name !== "server") answer.push([name, value]);
  });
  answer.push(["x-content-type-options", "nosniff"], ["cache-control", "no-store"]);
  return new Response(body, { status: response.status, headers: answer });
});
Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, app.fetch);
