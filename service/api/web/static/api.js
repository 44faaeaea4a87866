// HTTP client of the Carta API: JSON calls with the optional API key, uploads with byte
// progress, and a server-sent-events reader that works for POST as well as GET.

const KEY_STORAGE = "carta.apiKey";

export function apiKey() {
  return localStorage.getItem(KEY_STORAGE) || "";
}

export function setApiKey(key) {
  if (key) localStorage.setItem(KEY_STORAGE, key);
  else localStorage.removeItem(KEY_STORAGE);
}

function headers(extra = {}) {
  const key = apiKey();
  return key ? { ...extra, Authorization: `Bearer ${key}` } : extra;
}

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function errorFrom(response) {
  let code = "http_error";
  let message = `${response.status} ${response.statusText}`;
  try {
    const body = await response.json();
    if (body && body.error) ({ code, message } = body.error);
  } catch {
    /* not JSON: keep the status line */
  }
  return new ApiError(response.status, code, message);
}

export async function request(method, url, body) {
  const init = { method, headers: headers(body === undefined ? {} : { "Content-Type": "application/json" }) };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await fetch(url, init);
  if (!response.ok) throw await errorFrom(response);
  return response.json();
}

export const getJSON = (url) => request("GET", url);

/** Upload one file (with its georeference sidecars: world file, .prj, .aux.xml);
 * onProgress(fraction) while the bytes go up. Resolves {status, body}. */
export function upload(file, onProgress, sidecars = []) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", "/v1/documents");
    for (const [k, v] of Object.entries(headers())) xhr.setRequestHeader(k, v);
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    xhr.upload.onload = () => onProgress(1);
    xhr.onerror = () => reject(new ApiError(0, "network", "the server could not be reached"));
    xhr.onload = () => {
      let body = null;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        /* handled below */
      }
      if (xhr.status >= 200 && xhr.status < 300 && body) resolve({ status: xhr.status, body });
      else {
        const err = body && body.error ? body.error : { code: "http_error", message: `${xhr.status}` };
        reject(new ApiError(xhr.status, err.code, err.message));
      }
    };
    const form = new FormData();
    form.append("file", file, file.name);
    for (const side of sidecars) form.append("sidecars", side, side.name);
    xhr.send(form);
  });
}

/** Read a text/event-stream body, calling onEvent(name, data) per event (data JSON-parsed). */
export async function readEvents(response, onEvent) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value.replace(/\r\n?/g, "\n");
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let name = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (!data.length) continue;
      let parsed = data.join("\n");
      try {
        parsed = JSON.parse(parsed);
      } catch {
        /* plain text data */
      }
      if ((await onEvent(name, parsed)) === false) return;
    }
  }
}

/** Follow an ingestion job to its end: the SSE stream if the server has it, else polling.
 * Resolves {job, via: "events" | "polling"}. */
export async function followJob(job, onProgress) {
  try {
    const response = await fetch(`/v1/jobs/${encodeURIComponent(job.id)}/events`, {
      headers: headers({ Accept: "text/event-stream" }),
    });
    const type = response.headers.get("content-type") || "";
    if (response.ok && type.startsWith("text/event-stream")) {
      let last = job;
      await readEvents(response, (name, data) => {
        if (name === "progress" || name === "done") {
          last = data;
          onProgress(data);
        }
        return name !== "done";
      });
      if (last.status === "ready" || last.status === "failed") return { job: last, via: "events" };
    }
  } catch {
    /* fall back to polling */
  }
  for (;;) {
    const current = await getJSON(`/v1/jobs/${encodeURIComponent(job.id)}`);
    onProgress(current);
    if (current.status === "ready" || current.status === "failed") return { job: current, via: "polling" };
    await new Promise((r) => setTimeout(r, 600));
  }
}

/**
 * Ask a question. Streams when the server supports `stream: true` (text/event-stream),
 * otherwise uses the plain JSON answer. handlers: {evidence, token, citations}; resolves
 * the full AskResponse.
 */
let streamSupported = true;

export async function ask(body, handlers) {
  if (streamSupported) {
    const response = await fetch("/v1/ask", {
      method: "POST",
      headers: headers({ "Content-Type": "application/json", Accept: "text/event-stream, application/json" }),
      body: JSON.stringify({ ...body, stream: true }),
    });
    const type = response.headers.get("content-type") || "";
    if (response.ok && type.startsWith("text/event-stream")) {
      handlers.delivery?.("stream");
      let final = null;
      let failure = null;
      await readEvents(response, (name, data) => {
        if (name === "evidence") handlers.evidence?.(data.evidence || []);
        else if (name === "token") handlers.token?.(data.text || "");
        else if (name === "citations") handlers.citations?.(data);
        else if (name === "done") final = data;
        else if (name === "error") failure = data.error || { code: "error", message: String(data) };
        return final === null && failure === null;
      });
      if (failure) throw new ApiError(502, failure.code, failure.message);
      if (!final) throw new ApiError(502, "stream_ended", "the answer stream ended early");
      return final;
    }
    handlers.delivery?.("json");
    if (response.ok) return response.json(); // a server that ignores `stream` answers JSON
    const err = await errorFrom(response);
    if (!(response.status === 422 && /stream/.test(err.message))) throw err;
    streamSupported = false; // this server has no streaming: plain JSON from now on
  }
  handlers.delivery?.("json");
  return request("POST", "/v1/ask", body);
}

/** Fetch an image with the API key and return an object URL (only needed when a key is set,
 * or `always` to see the server's error message). */
export async function imageURL(url, always = false) {
  if (!apiKey() && !always) return url;
  const response = await fetch(url, { headers: headers() });
  if (!response.ok) throw await errorFrom(response);
  return URL.createObjectURL(await response.blob());
}

/** POST a multipart form (a FormData) with the API key; resolves the JSON body, throws ApiError
 * with the server's {error: {code, message}} on a non-2xx answer. */
export async function postForm(url, form) {
  const response = await fetch(url, { method: "POST", headers: headers(), body: form });
  if (!response.ok) throw await errorFrom(response);
  return response.json();
}
