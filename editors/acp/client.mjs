// The official ACP TypeScript SDK as a client of `tether acp`, end to end.
//
// Run by tests/e2e/acp/test_acp_typescript_sdk.py, which starts the provider stub and
// scripts the model's replies in the order of the steps below. It plays the editor:
// unsaved buffers it serves over fs/read_text_file, patches it takes over
// fs/write_text_file, permission answers from a script. It prints one JSON report of
// what it saw on stdout; the test judges it.
//
//   node client.mjs WORKSPACE COMMAND [ARGS...]

import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import * as path from "node:path";
import { Readable, Writable } from "node:stream";

import { client, ndJsonStream, RequestError } from "@agentclientprotocol/sdk";

const [workspace, command, ...args] = process.argv.slice(2);
const buffers = new Map([[path.join(workspace, "a.py"), "x = 1\ny = 2  # unsaved\n"]]);
const state = {
  updates: [], // [session, update] in arrival order
  asked: [], // the permission requests' tool calls and option kinds
  answers: [], // option ids to answer, in order
  reads: [],
  writes: [],
  reading: 0,
  mostReading: 0,
  onUpdate: () => {},
};

function start() {
  const agent = spawn(command, args, { cwd: workspace, stdio: ["pipe", "pipe", "inherit"] });
  const stream = ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));
  const app = client({ name: "tether-e2e" })
    .onNotification("session/update", ({ params }) => {
      state.updates.push([params.sessionId, params.update]);
      state.onUpdate(params);
    })
    .onRequest("session/request_permission", ({ params }) => {
      state.asked.push({ toolCall: params.toolCall, kinds: params.options.map((o) => o.kind) });
      const optionId = state.answers.shift();
      return { outcome: optionId ? { outcome: "selected", optionId } : { outcome: "cancelled" } };
    })
    .onRequest("fs/read_text_file", async ({ params }) => {
      state.reads.push(params.path);
      state.mostReading = Math.max(state.mostReading, ++state.reading);
      try {
        await new Promise((done) => setTimeout(done, 300));
        if (buffers.has(params.path)) return { content: buffers.get(params.path) };
        try {
          return { content: await readFile(params.path, "utf8") };
        } catch {
          throw RequestError.resourceNotFound(params.path);
        }
      } finally {
        state.reading--;
      }
    })
    .onRequest("fs/write_text_file", ({ params }) => {
      state.writes.push([params.path, params.content]);
      buffers.set(params.path, params.content);
      return {};
    });
  return { agent, app, stream };
}

const capabilities = { fs: { readTextFile: true, writeTextFile: true }, terminal: false };

async function firstConnection(ctx, report) {
  const init = await ctx.request("initialize", {
    protocolVersion: 1,
    clientCapabilities: capabilities,
  });
  report.loadSession = init.agentCapabilities.loadSession;
  const { sessionId } = await ctx.request("session/new", { cwd: workspace, mcpServers: [] });
  report.session = sessionId;
  const prompt = async (text) =>
    (await ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] }))
      .stopReason;

  report.read = await prompt("read both");
  report.mostReading = state.mostReading;
  report.reads = [...state.reads];

  state.answers = ["allow"];
  report.allowOnce = await prompt("run once");
  state.answers = ["always"];
  report.allowAlways = await prompt("run always");
  report.askedAfterAlways = state.asked.length;
  report.notAskedAgain = await prompt("run again");
  report.askedInAll = state.asked.length;
  state.answers = ["deny"];
  report.reject = await prompt("run denied");
  state.answers = ["never"];
  report.rejectAlways = await prompt("run never");
  report.askedAfterNever = state.asked.length;

  state.answers = ["allow"];
  report.patch = await prompt("patch a.py");
  report.writes = [...state.writes];

  // Cancel as soon as the endless reply starts to stream.
  let cancelled = false;
  state.onUpdate = (params) => {
    if (!cancelled && params.update.sessionUpdate === "agent_message_chunk") {
      cancelled = true;
      ctx.notify("session/cancel", { sessionId });
    }
  };
  report.cancel = await prompt("talk forever");
  state.onUpdate = () => {};

  const listed = await ctx.request("session/list", { cwd: workspace });
  report.listed = listed.sessions.map((s) => [s.sessionId, s.title]);
  report.asked = state.asked;
  report.updates = state.updates.map(([, update]) => update);

  // Deny always holds in every session of the workspace: a new one is not asked.
  const other = await ctx.request("session/new", { cwd: workspace, mcpServers: [] });
  report.neverAgain = (
    await ctx.request("session/prompt", {
      sessionId: other.sessionId,
      prompt: [{ type: "text", text: "run never again" }],
    })
  ).stopReason;
  report.askedAtTheEnd = state.asked.length;
}

async function secondConnection(ctx, report) {
  await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: capabilities });
  state.updates = [];
  await ctx.request("session/load", { sessionId: report.session, cwd: workspace, mcpServers: [] });
  report.replayed = state.updates.map(([, update]) => update.sessionUpdate);
}

async function connection(work, report) {
  const { agent, app, stream } = start();
  const exited = new Promise((done) => agent.on("exit", (code) => done(code)));
  await app.connectWith(stream, (ctx) => work(ctx, report));
  agent.stdin.end(); // the client hangs up: the agent ends
  return exited;
}

const report = {};
report.firstExit = await connection(firstConnection, report);
report.secondExit = await connection(secondConnection, report);
process.stdout.write(JSON.stringify(report) + "\n");
