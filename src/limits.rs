//! Every bound the host enforces, in one place: defaults, hard caps and the
//! fixed sizes and intervals of the transports.
//!
//! Times are milliseconds, sizes are bytes, unless a name says otherwise. A
//! host option may lower or raise a default of [`Limits`], but
//! [`Limits::clamped`] keeps it within the hard caps (the `HARD_MAX_*`
//! constants, and [`MAX_TIMEOUT_MS`] for every timeout).

// ---------------------------------------------------------------------------
// Fixed bounds (not configurable)
// ---------------------------------------------------------------------------

/// Worker threads of the addon's tokio runtime (the binding's `runtime.rs`): one, so
/// the tasks of a call hand off on one thread; blocking work has tokio's pool.
pub const RUNTIME_WORKER_THREADS: usize = 1;

/// Longest stdio line (one JSON-RPC message) accepted from a server: 16 MiB.
/// Longer lines are discarded without being buffered; a response discarded
/// this way fails its request with `limit_exceeded`.
pub const MAX_STDIO_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
/// Deepest nesting (levels of `{`/`[`) a stdio message may have: 128, the
/// recursion limit of the JSON parser. Deeper messages cannot be parsed and
/// are dropped by rmcp's codec; a response dropped this way fails its
/// request with `limit_exceeded`.
pub const MAX_MESSAGE_DEPTH: usize = 128;
/// `tools/list` requests a stdio connection remembers as unanswered, to read
/// their answers as raw JSON (a count; see `transport::stdio`).
pub const MAX_PENDING_LIST_IDS: usize = 16;
/// A stdio line at least this long (bytes) that may answer a pending
/// `tools/list` is read in full at once, not probed for its `id` first.
pub const LIST_PROBE_MAX_BYTES: usize = 16 * 1024;
/// Values waiting for the `reclaim` thread (a count); past it a value is
/// dropped where it is let go.
pub const MAX_PENDING_RECLAIMS: usize = 64;
/// Bytes kept from the start and from the end of each stdout JSON line
/// (96 each), to find the `id` of a message too long or too deep to deliver.
pub const OVERSIZE_ID_WINDOW_BYTES: usize = 96;
/// Bytes of stderr kept per server for error messages (the tail): 4 KiB.
pub const STDERR_TAIL_BYTES: usize = 4 * 1024;
/// Longest stderr line forwarded as one `log` event (bytes, 8 KiB); longer
/// lines are split.
pub const STDERR_LINE_BYTES: usize = 8 * 1024;
/// Bytes read from a server's stderr pipe at once: 16 KiB.
pub const STDERR_READ_CHUNK_BYTES: usize = 16 * 1024;
/// At most this many "non-JSON stdout line" warnings (a count) per server per window.
pub const STDOUT_NOISE_WARNINGS_PER_WINDOW: u32 = 3;
/// Length of the window for [`STDOUT_NOISE_WARNINGS_PER_WINDOW`] (ms).
pub const STDOUT_NOISE_WINDOW_MS: u64 = 10_000;
/// Longest excerpt of a non-JSON stdout line quoted in its warning (bytes).
pub const STDOUT_NOISE_EXCERPT_BYTES: usize = 120;
/// Sustained pacing of re-lists after `notifications/tools/list_changed`:
/// at most one re-list per this many ms once [`LIST_CHANGED_BURST`] ran
/// back to back (generic cell rate algorithm; notices that arrive while a
/// re-list is scheduled cost nothing more).
pub const LIST_CHANGED_DEBOUNCE_MS: u64 = 100;
/// Re-lists after `notifications/tools/list_changed` that run at once, one
/// right after another, before [`LIST_CHANGED_DEBOUNCE_MS`] paces them (a
/// count; credit comes back at one per [`LIST_CHANGED_DEBOUNCE_MS`]).
pub const LIST_CHANGED_BURST: u32 = 4;
/// Grace after closing stdin before SIGTERM is sent to the process group
/// (ms); on Windows, before the server's Job Object is ended.
pub const STOP_STDIN_GRACE_MS: u64 = 2_000;
/// Grace after SIGTERM before SIGKILL is sent to the process group (ms); on
/// Windows, the wait for the exit of a server whose job was ended.
pub const STOP_TERM_GRACE_MS: u64 = 2_000;
/// The shortest time between two progress notifications of one
/// `tools/call` passed on to the app (`onProgress`, AHP chat actions), in
/// ms: within it the latest is kept and passed on when it ends or before
/// the result (`mcp::tool_call::pacing`), so a flood of progress for
/// a live call costs at most one item per interval.
pub const PROGRESS_MIN_INTERVAL_MS: u64 = 20;
/// How long a `notifications/cancelled` (a timed-out, aborted or
/// abandoned request) may wait for the transport to take it (ms). It is sent
/// from a task of its own, never awaited by the request it ends: a server
/// that stopped reading stdin (a full pipe) or a stalled HTTP POST can delay
/// the notice, never the request's own timeout or abort.
pub const CANCEL_NOTICE_WAIT_MS: u64 = 5_000;
/// Interval at which a stopping server's process group is polled for "gone"
/// (leader reaped, group empty) (ms).
pub const PROCESS_GONE_POLL_MS: u64 = 20;
/// Interval at which a running stdio server's process tree is walked for
/// descendants that left its process group (`setsid()`, a double fork;
/// Linux only, `src/transport/descendants.rs`) (ms).
pub const DESCENDANT_SCAN_MS: u64 = 500;
/// Most processes one walk of a server's process tree looks at (a count).
pub const MAX_DESCENDANT_WALK: usize = 4_096;
/// Most descendants outside its process group remembered per server (a
/// count); one found beyond it is still signalled by the walk right before
/// each stop signal, but not after it was orphaned, nor by the host-death
/// watchdog.
pub const MAX_TRACKED_DESCENDANTS: usize = 256;
/// Most processes of `/proc` looked at by one search for a server's
/// process mark, right before a stop signal (Linux only,
/// `src/transport/descendants.rs`) (a count): 65,536.
pub const MAX_MARK_SCAN_PROCESSES: usize = 65_536;
/// Most sweeps of the final kill of a server's processes (a count): each
/// stops what it finds, and the kill comes once a sweep finds nothing new.
pub const MAX_KILL_SWEEPS: usize = 16;
/// Most bytes of one process's environment read by that search, 64 KiB
/// at a time: 32 MiB (Linux puts environment and arguments in at most a
/// quarter of the stack limit: 2 MiB by default, more under a raised
/// `ulimit -s`).
pub const MAX_ENVIRON_READ_BYTES: usize = 32 * 1024 * 1024;
/// Reads again of a process whose environment read empty during a search
/// for a server's process mark (a process in the middle of `execve` reads
/// so for a moment; Linux only, `src/transport/descendants.rs`) (a count).
pub const MARK_SCAN_EMPTY_RETRIES: u32 = 3;
/// Wait between those reads again (ms).
pub const MARK_SCAN_RETRY_MS: u64 = 2;
/// After a graceful `shutdown` disposed the host, how long it waits for every
/// server's tasks (actor, connection service) to end, in ms.
pub const TASKS_END_WAIT_MS: u64 = 2_000;
/// Redirect hops followed for one Streamable HTTP request (a count; same
/// origin only, cross-origin redirects are refused).
pub const MAX_HTTP_REDIRECTS: usize = 10;
/// How long a pooled Streamable HTTP connection may stay idle before it is
/// dropped (ms). Below Node's default server keep-alive timeout (5 s), as
/// undici's own 4 s default is: an idle connection is never reused just as
/// the server closes it (which fails the request with "error sending request").
pub const HTTP_POOL_IDLE_MS: u64 = 4_000;
/// Longest wait, after a Streamable HTTP handshake that opened a session,
/// for the answer to the session's standalone GET stream request before the
/// server is reported `ready` (ms; see `transport::stream_watch`).
pub const GET_STREAM_WAIT_MS: u64 = 2_000;
/// Most Streamable HTTP requests per connection whose response stream
/// carried an SSE event over rmcp's event size limit (16 MiB) and that were
/// not yet failed `limit_exceeded` (see `transport::stream_watch`): 64; an
/// older note is forgotten (its request then fails as a closed stream).
pub const MAX_OVERSIZED_EVENT_NOTES: usize = 64;
/// Most Streamable HTTP `tools/list` responses per connection whose tools'
/// `execution` members (MCP 2025-11-25) wait to be taken by their request
/// (see `transport::raw_tools`); an older note is forgotten.
pub const MAX_EXECUTION_NOTES: usize = 8;
/// Raw Streamable HTTP `tools/list` results waiting for their request (see
/// `transport::stream_watch`); past it an answer takes rmcp's decode.
pub const MAX_STASHED_LISTS: usize = 8;
/// Longest `execution` member of a tool (compact JSON, bytes: 1 KiB) noted
/// from a Streamable HTTP `tools/list` SSE event; a longer one is left out.
pub const MAX_EXECUTION_MEMBER_BYTES: usize = 1024;
/// Largest OAuth metadata document (RFC 9728 / RFC 8414) accepted: 64 KiB.
pub const MAX_AUTH_METADATA_BYTES: usize = 64 * 1024;
/// Largest `NODE_EXTRA_CA_CERTS` file read (a PEM bundle): 4 MiB (the
/// whole Mozilla root store is about 0.3 MiB).
pub const MAX_CA_FILE_BYTES: usize = 4 * 1024 * 1024;
/// Time allowed for each OAuth metadata request (ms).
pub const AUTH_METADATA_TIMEOUT_MS: u64 = 10_000;
/// Largest OAuth response body (metadata, registration, token) the host's
/// own OAuth HTTP client reads (DPoP sign-ins, the JWT-bearer grant): 1 MiB,
/// as rmcp's.
pub const MAX_OAUTH_RESPONSE_BYTES: usize = 1024 * 1024;
/// Time allowed for each request of the host's own OAuth HTTP client (ms), as rmcp's.
pub const OAUTH_REQUEST_TIMEOUT_MS: u64 = 30_000;
/// Longest model-safe tool name (characters; all ASCII, so also bytes): 64,
/// what model APIs accept (`^[A-Za-z0-9_-]{1,64}$`).
pub const MAX_MODEL_TOOL_NAME_CHARS: usize = 64;
/// Characters of an over-long tool name shown in its diagnostic.
pub const DIAGNOSTIC_TOOL_NAME_CHARS: usize = 64;
/// Longest sanitized plugin id kept in a `PLUGIN_DATA` directory name
/// (bytes, all ASCII), before the hash suffix.
pub const MAX_DATA_DIR_NAME_BYTES: usize = 64;
/// Longest `${NAME}` echoed in a validation message (bytes of `NAME`);
/// longer or odd names are shown as `${…}`.
pub const MAX_ECHOED_VARIABLE_NAME_BYTES: usize = 64;
/// Deepest nesting of an imported configuration file (`importConfig`): 64.
pub const MAX_IMPORT_DEPTH: usize = 64;
/// Longest wait for the app's `headers` provider at a connect (ms): 10 s;
/// later, the connect fails `connect_failed` naming the provider.
pub const HEADER_PROVIDER_TIMEOUT_MS: u64 = 10_000;
/// Most roots the host hands to servers (a count): 1 000. `setRoots` and the
/// `roots` option refuse more; a `roots` handler's answer is cut to this many
/// (a `warn` log says so).
pub const MAX_ROOTS: usize = 1_000;
/// Longest root URI or path accepted (bytes, as given): 8 KiB.
pub const MAX_ROOT_URI_BYTES: usize = 8 * 1024;
/// Longest root `name` accepted (bytes): 1 KiB.
pub const MAX_ROOT_NAME_BYTES: usize = 1024;
/// Longest part of a refused root URI quoted in an error or log message
/// (bytes); longer values end with `…`.
pub const MAX_ECHOED_ROOT_BYTES: usize = 200;

/// Longest server `instructions` kept in a server's identity (bytes; cut at
/// a character boundary, with `instructionsTruncated: true`): 16 KiB.
pub const MAX_SERVER_INSTRUCTIONS_BYTES: usize = 16 * 1024;
/// Longest `serverInfo` text field kept (`name`, `title`, `version`,
/// `description`, `websiteUrl`; bytes, cut at a character boundary): 1 KiB.
pub const MAX_SERVER_INFO_TEXT_BYTES: usize = 1024;
/// Most `serverInfo.icons` kept: 8.
pub const MAX_SERVER_ICONS: usize = 8;
/// Longest icon `src` kept (bytes; a longer one, e.g. a large `data:` URI,
/// is dropped): 16 KiB.
pub const MAX_SERVER_ICON_SRC_BYTES: usize = 16 * 1024;
/// Largest declared-capabilities object kept in a server's identity (bytes
/// of JSON; a larger one is replaced by `null` with `capabilitiesOmitted`): 16 KiB.
pub const MAX_SERVER_CAPABILITIES_BYTES: usize = 16 * 1024;

/// Most `input_required` rounds (MRTR, SEP-2322, MCP 2026-07-28) one request
/// may take before it fails with `limit_exceeded`: 10 (rmcp's default).
pub const MAX_INPUT_REQUIRED_ROUNDS: usize = 10;
/// First pause before retrying an `input_required` result that carries only
/// `requestState` (no input requests; ms). Doubles per such round up to
/// [`MAX_STATE_ONLY_ROUND_PAUSE_MS`].
pub const STATE_ONLY_ROUND_PAUSE_MS: u64 = 50;
/// Longest pause between two state-only rounds (ms).
pub const MAX_STATE_ONLY_ROUND_PAUSE_MS: u64 = 250;

/// Shortest pause between two `tasks/get` polls of a task (Tasks extension,
/// SEP-2663; ms): a server's smaller `pollIntervalMs` hint is raised to it.
pub const TASK_POLL_MIN_MS: u64 = 50;
/// Pause between two `tasks/get` polls when the server gives no
/// `pollIntervalMs` hint (ms).
pub const TASK_POLL_DEFAULT_MS: u64 = 1_000;
/// Longest pause between two `tasks/get` polls (ms): a larger hint is
/// lowered to it.
pub const TASK_POLL_MAX_MS: u64 = 30_000;
/// Longest time one host follows one task (ms; 24 h): then the call fails
/// `timeout` (kind `total`) and `tasks/cancel` is sent.
pub const TASK_MAX_LIFETIME_MS: u64 = 24 * 60 * 60 * 1_000;
/// Most input requests (`inputRequests` keys) answered for one task before
/// the call fails `limit_exceeded`.
pub const MAX_TASK_INPUT_REQUESTS: usize = 64;
/// Most outstanding tasks recorded under `dataDir` (`.tasks/`) per host:
/// a task beyond it is followed but not recorded (a `warn` log), and a host
/// adopts at most this many of former hosts (the rest dropped, a `warn`).
pub const MAX_RECORDED_TASKS: usize = 256;
/// Largest task record file (`<dataDir>/.tasks/<instance>.json`) a host
/// adopts from a host no longer running (bytes); a larger one is refused
/// with a `warn` and removed.
pub const MAX_TASK_RECORD_FILE_BYTES: usize = 1024 * 1024;
/// Most entries of `<dataDir>/.tasks/` looked at when a host adopts the
/// records of hosts no longer running (a count).
pub const MAX_TASK_RECORD_FILES: usize = 256;
/// Age after which an unlocked lock file without records, or a temporary
/// file, that a crashed host left under `<dataDir>/.tasks/` is removed by
/// the next host (ms).
pub const STALE_TASK_FILE_MS: u64 = 60_000;
/// How often a host that found a recorded task looks whether its server is
/// `ready` again (ms; only while such a task waits).
pub const TASK_RESUME_POLL_MS: u64 = 100;

/// First pause before a `subscriptions/listen` stream (MCP 2026-07-28) that
/// ended while its server is ready is opened again (ms). Doubles per
/// consecutive end up to [`LISTEN_REOPEN_MAX_MS`]; a stream that stayed open
/// at least that long starts over at this pause.
pub const LISTEN_REOPEN_MIN_MS: u64 = 250;
/// Longest pause before a `subscriptions/listen` stream is opened again (ms).
pub const LISTEN_REOPEN_MAX_MS: u64 = 30_000;
/// How long closing a connection waits for its listen streams to be
/// cancelled (`notifications/cancelled` sent, SSE stream closed) before it
/// closes the transport anyway (ms).
pub const LISTEN_STOP_WAIT_MS: u64 = 500;
/// Most resources the app may subscribe to on one server (`subscribeResource`;
/// a count): 256. One more is refused with `limit_exceeded`.
pub const MAX_RESOURCE_SUBSCRIPTIONS: usize = 256;
/// Longest resource URI accepted by `subscribeResource` (bytes): 8 KiB.
pub const MAX_SUBSCRIBED_URI_BYTES: usize = 8 * 1024;
/// Most files one skill entry may list (SEP-2640 "Limits": every host
/// supports 512; a count). A larger entry is listed with a `problem` and
/// cannot be loaded.
pub const MAX_SKILL_RESOURCES: usize = 512;
/// Most bytes one skill's files may have together, the sum of the entry's
/// `size`s (SEP-2640 "Limits": 16 MiB).
pub const MAX_SKILL_TOTAL_BYTES: u64 = 16 * 1024 * 1024;
/// Most skill entries kept per server from `skills/list` (a count): 1,000.
/// A longer listing fails with `limit_exceeded` (logged; the server stays
/// ready with no skills).
pub const MAX_SKILLS_PER_SERVER: usize = 1_000;
/// Longest YAML frontmatter of a `SKILL.md` parsed by `loadSkill` (bytes): 64 KiB.
pub const MAX_SKILL_FRONTMATTER_BYTES: usize = 64 * 1024;
/// Deepest nesting of a `SKILL.md` frontmatter (mappings and sequences): 16.
pub const MAX_SKILL_FRONTMATTER_DEPTH: usize = 16;
/// Most mapping keys in a `SKILL.md` frontmatter, at every level together: 1,024.
pub const MAX_SKILL_FRONTMATTER_KEYS: usize = 1_024;
/// Longest time a result is kept in a connection's response cache, whatever
/// its `ttlMs` (SEP-2549; ms): 24 h.
pub const MAX_CACHE_TTL_MS: u64 = 24 * 60 * 60 * 1000;
/// Most results kept in one connection's response cache (a count; the
/// oldest goes first): 256.
pub const MAX_CACHE_ENTRIES: usize = 256;
/// Most bytes of JSON kept in one connection's response cache (the oldest
/// entries go first; a larger single result is not kept): 8 MiB.
pub const MAX_CACHE_BYTES: usize = 8 * 1024 * 1024;
/// Most server configurations whose 2025 era `dataDir/protocol-eras.json`
/// remembers (the least recently seen go first; `mcp::eras`): 256.
pub const MAX_ERA_MEMORY_ENTRIES: usize = 256;
/// Largest `protocol-eras.json` read (bytes; a larger one counts as empty): 64 KiB.
pub const MAX_ERA_MEMORY_FILE_BYTES: usize = 64 * 1024;
/// Longest read of `protocol-eras.json` (ms; then it counts as empty): 2 s.
pub const ERA_MEMORY_READ_TIMEOUT_MS: u64 = 2_000;
/// How long a remembered 2025 era holds before `auto` probes with
/// `server/discover` again (ms): 7 days.
pub const ERA_MEMORY_TTL_MS: u64 = 7 * 24 * 60 * 60 * 1000;
/// Longest wait for the answer a failed Streamable HTTP handshake is asked
/// again for, to say what the endpoint answered (ms): 5 s.
pub const HTTP_DIAGNOSTIC_TIMEOUT_MS: u64 = 5_000;
/// Most bytes of that answer's body read (bytes): 4 KiB.
pub const MAX_HTTP_ERROR_BODY_BYTES: usize = 4 * 1024;
/// Most characters of that body shown in the error (chars): 200.
pub const MAX_HTTP_ERROR_PREVIEW_CHARS: usize = 200;
/// Shortest secret value (a configured header value, a URL's query value,
/// a token) the host takes out of every text it shows (bytes): 6. Shorter
/// values (`1`, `json`) are too likely to be ordinary words of a text, so
/// they are not kept (`crate::redact::KeptSecret`).
pub const MIN_KEPT_SECRET_BYTES: usize = 6;

// ---------------------------------------------------------------------------
// Floods from a server (docs/reliability.md, "Floods")
// ---------------------------------------------------------------------------

/// Notifications and requests of one server connection handed to rmcp's
/// handler tasks and not finished yet (a count): 256. rmcp runs each in a
/// task of its own; at this many the connection's reader stops reading
/// until one finishes, so a flood slows the server down (its pipe or
/// stream fills) instead of queueing tasks without end. Above
/// [`MAX_PENDING_SERVER_REQUESTS`], so requests waiting on the app never
/// hold every slot.
pub const PEER_MESSAGES_IN_FLIGHT: usize = 256;
/// Messages of one connection handed to its transport and not yet written
/// (a count): 256. While none is free the connection's reader waits, so
/// answers a server does not take in (a stdin it stopped reading, a flood
/// of server requests over Streamable HTTP, each answered by a POST) hold
/// its own stream back instead of queueing in this process.
pub const SENDS_IN_FLIGHT: usize = 256;
/// Server-initiated requests (`roots/list`, `sampling/createMessage`,
/// `elicitation/create`) of one server connection waiting on the app at
/// once (a count): 64. One more is answered at once with a JSON-RPC error
/// naming this bound (and a rate-limited `warn` log, target `host.requests`).
pub const MAX_PENDING_SERVER_REQUESTS: usize = 64;
// Requests waiting on the app never take every reader slot.
const _: () = assert!(PEER_MESSAGES_IN_FLIGHT > MAX_PENDING_SERVER_REQUESTS);
/// Open AHP input requests (`chat/inputRequested`) of one tool call (a
/// count): 16. A further elicitation of that call is not published:
/// it is answered with a JSON-RPC error naming this bound.
pub const MAX_OPEN_INPUTS_PER_CALL: usize = 16;
/// Interval of the counted warnings about what a flood lost (ms): notifications
/// dropped, log records and stderr lines suppressed. The count is logged
/// at most this often while the flood lasts, and once more when it ends
/// (the connection or stream closes, or, for stderr, a quiet interval).
pub const FLOOD_REPORT_INTERVAL_MS: u64 = 5_000;
/// MCP log messages (`notifications/message`) of one server connection
/// delivered at once before [`SERVER_LOG_PER_SECOND`] paces them (a count;
/// token bucket). The rest are counted in a `warn` record (target `server.log`).
pub const SERVER_LOG_BURST: u32 = 1_000;
/// Sustained rate of MCP log messages delivered per server connection
/// (records per second) once [`SERVER_LOG_BURST`] is spent.
pub const SERVER_LOG_PER_SECOND: u32 = 200;
/// Stderr lines of one server delivered at once before
/// [`STDERR_LINES_PER_SECOND`] paces them (a count; token bucket). The
/// rest are counted (lines and bytes) in a `warn` record (target `server.stderr`).
pub const STDERR_LINES_BURST: u32 = 1_000;
/// Sustained rate of stderr lines delivered per server (lines per second)
/// once [`STDERR_LINES_BURST`] is spent.
pub const STDERR_LINES_PER_SECOND: u32 = 200;
/// Log records waiting in the addon's outbox for the JS thread (a count):
/// 10,000. Beyond it log records are dropped (actions, answers and every
/// other event never are) and the count is delivered as one `warn` record
/// (target `host.events`) with the next drain.
pub const MAX_OUTBOX_LOG_RECORDS: usize = 10_000;
/// Longest time a stdio server's stdin may take no byte of the message
/// being written (ms): 10 s. Then that write (a batch of the messages
/// queued when it began), and the sends waiting behind it, are abandoned:
/// they fail (a `warn` log, target `host.stdio`), and when part of the
/// batch was written (the stream now carries a torn
/// line) the connection fails too. A slow reader that keeps taking bytes
/// stalls nothing.
pub const STDIN_WRITE_TIMEOUT_MS: u64 = 10_000;
/// Batches given up on one stdio server's stdin whose lines a send may
/// still ask about (`transport/stdio/writer.rs`; batches given up one
/// after the other, nothing written between, count as one): each took a
/// whole [`STDIN_WRITE_TIMEOUT_MS`]. A send first polled after more than
/// this many is told its line was lost, never that it was written.
pub const MAX_LOST_STDIN_BATCHES: usize = 64;

// ---------------------------------------------------------------------------
// Hard caps of the tunable limits
// ---------------------------------------------------------------------------

/// Hard cap for any configurable timeout (ms): 24 h. Timeouts are also at least 1 ms.
pub const MAX_TIMEOUT_MS: u64 = 24 * 60 * 60 * 1000;
/// Hard cap of [`Limits::max_restarts`] (a count): 100.
pub const HARD_MAX_RESTARTS: u32 = 100;
/// Hard cap of [`Limits::max_list_pages`] (pages): 1 000.
pub const HARD_MAX_LIST_PAGES: usize = 1_000;
/// Hard cap of [`Limits::max_cursor_bytes`] (bytes): 16 KiB.
pub const HARD_MAX_CURSOR_BYTES: usize = 16 * 1024;
/// Hard cap of [`Limits::max_tools_per_server`] (tools): 50 000.
pub const HARD_MAX_TOOLS_PER_SERVER: usize = 50_000;
/// Hard cap of [`Limits::max_list_items`] (items): 100 000.
pub const HARD_MAX_LIST_ITEMS: usize = 100_000;
/// Hard cap of [`Limits::max_tool_name_bytes`] (bytes): 1 KiB.
pub const HARD_MAX_TOOL_NAME_BYTES: usize = 1024;
/// Hard cap of [`Limits::max_tool_description_bytes`] (bytes): 64 KiB.
pub const HARD_MAX_TOOL_DESCRIPTION_BYTES: usize = 64 * 1024;
/// Hard cap of [`Limits::max_tool_schema_bytes`] (bytes): 1 MiB.
pub const HARD_MAX_TOOL_SCHEMA_BYTES: usize = 1024 * 1024;
/// Hard cap of [`Limits::max_total_schema_bytes`] (bytes): 64 MiB.
pub const HARD_MAX_TOTAL_SCHEMA_BYTES: usize = 64 * 1024 * 1024;
/// Hard cap of [`Limits::max_result_bytes`] (bytes): 16 MiB, the stdio
/// message limit [`MAX_STDIO_MESSAGE_BYTES`].
pub const HARD_MAX_RESULT_BYTES: usize = MAX_STDIO_MESSAGE_BYTES;
/// Hard cap of [`Limits::max_json_depth`] (levels): 128, the parser's
/// recursion limit [`MAX_MESSAGE_DEPTH`].
pub const HARD_MAX_JSON_DEPTH: usize = MAX_MESSAGE_DEPTH;
/// Hard cap of [`Limits::max_json_properties`] (members): 1 000 000.
pub const HARD_MAX_JSON_PROPERTIES: usize = 1_000_000;
/// Hard cap of [`Limits::max_app_ui_meta_bytes`] (bytes): 256 KiB.
pub const HARD_MAX_APP_UI_META_BYTES: usize = 256 * 1024;
/// Hard cap of [`Limits::max_channel_message_bytes`] (bytes): 16 MiB, the
/// stdio message limit [`MAX_STDIO_MESSAGE_BYTES`].
pub const HARD_MAX_CHANNEL_MESSAGE_BYTES: usize = MAX_STDIO_MESSAGE_BYTES;
/// Hard cap of [`Limits::max_channel_requests`] (requests in flight on one
/// channel): 1 024.
pub const HARD_MAX_CHANNEL_REQUESTS: usize = 1_024;
/// Hard cap of [`Limits::max_ui_resource_bytes`] (bytes): 16 MiB.
pub const HARD_MAX_UI_RESOURCE_BYTES: usize = 16 * 1024 * 1024;
/// Hard cap of [`Limits::max_concurrent_launches`] (stdio servers starting
/// at once): 256.
pub const HARD_MAX_CONCURRENT_LAUNCHES: usize = 256;
/// Hard cap of [`Limits::max_config_file_bytes`] (bytes): 64 MiB.
pub const HARD_MAX_CONFIG_FILE_BYTES: usize = 64 * 1024 * 1024;

/// Tunable limits (host option `limits`, parsed by the binding's
/// `JsLimits`: every field is optional in JS, missing fields take the
/// defaults of [`Limits::default`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Time allowed for spawn/connect plus the `initialize` handshake (ms). Default 30 000.
    pub startup_timeout_ms: u64,
    /// Default per-call timeout for `tools/call` (ms). Default 60 000.
    pub call_timeout_ms: u64,
    /// Automatic restarts after a crash before the server stays in `error`.
    /// Default 3, hard cap [`HARD_MAX_RESTARTS`].
    pub max_restarts: u32,
    /// First restart delay (ms); doubles on each consecutive crash. Default 1 000.
    pub restart_backoff_ms: u64,
    /// Upper bound of the restart delay (ms). Default 30 000.
    pub restart_backoff_max_ms: u64,
    /// Uptime after which the crash counter and backoff reset (ms). Default 60 000.
    pub restart_reset_after_ms: u64,
    /// Absolute cap on one `tools/call` (ms), from the call to its answer (a
    /// lazy server's start included); progress never extends it. Default 600 000.
    pub call_max_total_ms: u64,
    /// Pages followed by one list walk (`tools/list`, `resources/list`, …).
    /// Default 100, hard cap [`HARD_MAX_LIST_PAGES`].
    pub max_list_pages: usize,
    /// Longest pagination cursor (bytes). Default 4 KiB, hard cap [`HARD_MAX_CURSOR_BYTES`].
    pub max_cursor_bytes: usize,
    /// Tools per server; more fails the listing. Default 5 000, hard cap
    /// [`HARD_MAX_TOOLS_PER_SERVER`].
    pub max_tools_per_server: usize,
    /// Items per resource/prompt list walk. Default 10 000, hard cap [`HARD_MAX_LIST_ITEMS`].
    pub max_list_items: usize,
    /// Longest tool name kept (bytes). Default 256, hard cap [`HARD_MAX_TOOL_NAME_BYTES`].
    pub max_tool_name_bytes: usize,
    /// Longest tool description kept; longer ones are cut (bytes). Default
    /// 16 KiB, hard cap [`HARD_MAX_TOOL_DESCRIPTION_BYTES`].
    pub max_tool_description_bytes: usize,
    /// Input plus output schema of one tool (bytes, serialized). Default
    /// 256 KiB, hard cap [`HARD_MAX_TOOL_SCHEMA_BYTES`].
    pub max_tool_schema_bytes: usize,
    /// All schemas of one server's listing (bytes). Default 16 MiB, hard cap
    /// [`HARD_MAX_TOTAL_SCHEMA_BYTES`].
    pub max_total_schema_bytes: usize,
    /// A tool result, resource read or prompt: all content together (bytes,
    /// serialized). Default 10 000 000, hard cap [`HARD_MAX_RESULT_BYTES`].
    pub max_result_bytes: usize,
    /// Nesting depth of schemas and results (levels). Default 64, hard cap
    /// [`HARD_MAX_JSON_DEPTH`].
    pub max_json_depth: usize,
    /// Object members plus array elements of one schema or result. Default
    /// 100 000, hard cap [`HARD_MAX_JSON_PROPERTIES`].
    pub max_json_properties: usize,
    /// Largest `_meta.ui` of an App tool (MCP Apps, SEP-1865) carried on its
    /// AHP tool-call actions (bytes of JSON); a larger one is left off with
    /// a `warn` log (target `host.apps`). Default 16 KiB, hard cap
    /// [`HARD_MAX_APP_UI_META_BYTES`].
    pub max_app_ui_meta_bytes: usize,
    /// One message sent on an MCP Apps `mcp://` channel (`sendChannelMessage`;
    /// bytes of its JSON text, `channel` included). Default 1 MiB, hard cap
    /// [`HARD_MAX_CHANNEL_MESSAGE_BYTES`].
    pub max_channel_message_bytes: usize,
    /// Requests in flight on one `mcp://` channel; one more is refused.
    /// Default 16, hard cap [`HARD_MAX_CHANNEL_REQUESTS`].
    pub max_channel_requests: usize,
    /// Time one `mcp://` channel request may take, every `input_required`
    /// round included (ms); then it is cancelled upstream and answered with
    /// a timeout. Default 60 000.
    pub channel_request_timeout_ms: u64,
    /// An MCP Apps UI resource (`ui://`): the `text` or `blob` of all its
    /// contents together (bytes, as sent). Default 4 MiB, hard cap
    /// [`HARD_MAX_UI_RESOURCE_BYTES`].
    pub max_ui_resource_bytes: usize,
    /// Stdio servers starting at once, host-wide: from spawn until the
    /// server is `ready` (handshake and first `tools/list` done) or its
    /// start failed; the others wait their turn in the order they asked
    /// (first start, restart, start request), shown `starting`, and a
    /// stop, remove or dispose ends the wait. Streamable HTTP servers do
    /// not wait. Default 8, hard cap [`HARD_MAX_CONCURRENT_LAUNCHES`]: a
    /// start is mostly CPU (Node/`npx` loading a package, a Python
    /// interpreter importing one); a hundred at once slow every one past
    /// its startup timeout and the machine with them, while 8 keep a
    /// typical 4–16 core machine busy (see `__test__/startup.test.mjs`).
    pub max_concurrent_launches: usize,
    /// Largest plugin `mcp.json` read (bytes); a larger file makes the plugin's
    /// load state `error`, naming the file and this limit, without being held
    /// in memory; also an import's bound (the file, one resolver answer, the
    /// resolved servers' text together). Default 8 MiB, hard cap [`HARD_MAX_CONFIG_FILE_BYTES`].
    pub max_config_file_bytes: usize,
    /// Time reading a plugin's `mcp.json` may take (ms); then the plugin's
    /// load state is `error`, naming the file. Default 10 000.
    pub config_read_timeout_ms: u64,
    /// Time all the answers of `importConfig`'s `resolve` for one import may
    /// take together (ms; asked one after another); a variable not answered
    /// by then has no value (a diagnostic says so). Default 300 000.
    pub import_resolve_timeout_ms: u64,
    /// The model-facing output budget of a chat tool call (characters,
    /// [`output_budget`]): what of a result goes into the AHP chat state;
    /// the text past it is cut with a marker and the whole result kept in a
    /// spill file under `dataDir`. A server's and a call's own budget come
    /// first. Default [`DEFAULT_MODEL_OUTPUT_MAX_CHARS`], hard cap
    /// [`HARD_MAX_MODEL_OUTPUT_CHARS`].
    pub model_output_max_chars: usize,
    /// Idle time after which a lazy server is stopped (ms; issue 29): no
    /// request in flight and none begun for this long. Its tools stay
    /// published; the next call starts it again. `0`: never. A server's
    /// own `idleStopMs` wins. Default [`DEFAULT_IDLE_STOP_MS`] (10 minutes).
    pub idle_stop_ms: u64,
    /// Time the app's `trust` callback may take to answer whether a server
    /// may start (ms; issue 32, `crate::policy`); then the start is refused
    /// (`trust_failed`, the server `stopped`). Default
    /// [`DEFAULT_TRUST_TIMEOUT_MS`] (5 minutes).
    pub trust_timeout_ms: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            startup_timeout_ms: 30_000,
            call_timeout_ms: 60_000,
            max_restarts: 3,
            restart_backoff_ms: 1_000,
            restart_backoff_max_ms: 30_000,
            restart_reset_after_ms: 60_000,
            call_max_total_ms: 600_000,
            max_list_pages: 100,
            max_cursor_bytes: 4 * 1024,
            max_tools_per_server: 5_000,
            max_list_items: 10_000,
            max_tool_name_bytes: 256,
            max_tool_description_bytes: 16 * 1024,
            max_tool_schema_bytes: 256 * 1024,
            max_total_schema_bytes: 16 * 1024 * 1024,
            max_result_bytes: 10_000_000,
            max_json_depth: 64,
            max_json_properties: 100_000,
            max_app_ui_meta_bytes: 16 * 1024,
            max_channel_message_bytes: 1024 * 1024,
            max_channel_requests: 16,
            channel_request_timeout_ms: 60_000,
            max_ui_resource_bytes: 4 * 1024 * 1024,
            max_concurrent_launches: 8,
            max_config_file_bytes: 8 * 1024 * 1024,
            config_read_timeout_ms: 10_000,
            import_resolve_timeout_ms: 300_000,
            model_output_max_chars: DEFAULT_MODEL_OUTPUT_MAX_CHARS,
            idle_stop_ms: DEFAULT_IDLE_STOP_MS,
            trust_timeout_ms: DEFAULT_TRUST_TIMEOUT_MS,
        }
    }
}

mod clamp;
mod delay;
pub mod import;
mod keychain;
pub use keychain::*;
pub mod output_budget;
pub use output_budget::*;
mod lazy_start;
pub use lazy_start::*;
mod legacy_sse;
pub use legacy_sse::*;
mod policy;
pub use policy::*;
mod sandbox;
pub use sandbox::*;
mod tool_filter;
pub use tool_filter::*;
mod tool_search;
pub use tool_search::*;
mod url_elicitation;
pub use url_elicitation::*;
mod remote_sign_in;
pub use remote_sign_in::*;
#[cfg(test)]
mod tests;
