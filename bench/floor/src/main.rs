//! The benchmark floor (client `Bt` of `npm run bench`): a plain rmcp 3.11
//! client with the addon's rmcp features, a current_thread tokio runtime and
//! one pooled `reqwest::Client`, so the figures show what an rmcp-based
//! client costs without any binding.
//!
//! Usage: `ahp-bench-floor '<spec JSON>'`. The spec is the one every bench
//! driver takes (bench/drivers.mjs): `scenario` (`seq`, `tp`, `big`,
//! `connect`, `list`, `refresh`, `rss`, `soak`, `servers`), the target
//! (`stdio`: `command`, `args`, `env`; `http`: `url`) and the counts. Prints
//! one JSON object of figures on stdout (times in ms, CPU in µs per call,
//! RSS in KiB); errors go to stderr with exit status 1. CPU is this
//! process's user + system time (`getrusage(RUSAGE_SELF)`, all threads;
//! the server is a child or another process and is not counted).

use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{json, Map, Value};
use tokio::sync::Notify;

type Error = Box<dyn std::error::Error + Send + Sync>;
type Service = RunningService<RoleClient, Handler>;

/// What one run measures (the JSON on argv; missing counts take defaults).
struct Spec {
    raw: Value,
    http: Option<reqwest::Client>,
}

impl Spec {
    fn str(&self, key: &str) -> &str {
        self.raw.get(key).and_then(Value::as_str).unwrap_or("")
    }
    fn num(&self, key: &str, default: u64) -> u64 {
        self.raw.get(key).and_then(Value::as_u64).unwrap_or(default)
    }
    fn stdio(&self) -> bool {
        self.str("transport") == "stdio"
    }
}

/// The client handler: wakes `changed` on `notifications/tools/list_changed`.
#[derive(Clone, Default)]
struct Handler {
    changed: Arc<Notify>,
}

impl ClientHandler for Handler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changed.notify_one();
    }
}

/// This process's CPU time (user + system, all threads) in µs.
fn cpu_us() -> f64 {
    // SAFETY: getrusage writes into the zeroed struct we own.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let tv = |t: libc::timeval| t.tv_sec as f64 * 1e6 + t.tv_usec as f64;
    tv(u.ru_utime) + tv(u.ru_stime)
}

/// This process's resident set size in KiB (`VmRSS` of /proc/self/status).
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    percentile(&v, 0.5)
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

/// Connects (initialize + initialized) to the spec's server.
async fn connect(spec: &Spec, handler: Handler) -> Result<Service, Error> {
    if spec.stdio() {
        let mut cmd = tokio::process::Command::new(spec.str("command"));
        let args = spec.raw["args"].as_array().cloned().unwrap_or_default();
        cmd.args(args.iter().filter_map(Value::as_str));
        cmd.env_clear();
        if let Some(env) = spec.raw["env"].as_object() {
            cmd.envs(env.iter().filter_map(|(k, v)| Some((k, v.as_str()?))));
        }
        let (transport, _) = TokioChildProcess::builder(cmd)
            .stderr(Stdio::inherit())
            .spawn()?;
        Ok(handler.serve(transport).await?)
    } else {
        let client = spec.http.clone().ok_or("an http spec without its client")?;
        let config = StreamableHttpClientTransportConfig::with_uri(spec.str("url"));
        let transport = StreamableHttpClientTransport::with_client(client, config);
        Ok(handler.serve(transport).await?)
    }
}

async fn close(service: Service) {
    let _ = service.cancel().await;
}

fn echo_params() -> CallToolRequestParams {
    let mut args = Map::new();
    args.insert("message".into(), json!("hello"));
    CallToolRequestParams::new("echo").with_arguments(args)
}

fn text_of(result: &CallToolResult) -> &str {
    result
        .content
        .iter()
        .find_map(|c| c.as_text().map(|t| t.text.as_str()))
        .unwrap_or("")
}

async fn echo(service: &Service) -> Result<(), Error> {
    let r = service.call_tool(echo_params()).await?;
    if text_of(&r) != "echo:hello" {
        return Err(format!("unexpected echo result {r:?}").into());
    }
    Ok(())
}

/// Sequential echo calls: latency p50/p99 (ms) and client CPU per call (µs).
async fn seq(spec: &Spec) -> Result<Value, Error> {
    let service = connect(spec, Handler::default()).await?;
    for _ in 0..spec.num("warmup", 200) {
        echo(&service).await?;
    }
    let calls = spec.num("calls", 2000) as usize;
    let mut lat = Vec::with_capacity(calls);
    let cpu0 = cpu_us();
    for _ in 0..calls {
        let t = Instant::now();
        echo(&service).await?;
        lat.push(ms_since(t));
    }
    let cpu = (cpu_us() - cpu0) / calls as f64;
    lat.sort_by(f64::total_cmp);
    close(service).await;
    Ok(json!({ "p50": percentile(&lat, 0.5), "p99": percentile(&lat, 0.99), "cpu": cpu }))
}

/// `inflight` workers calling echo until `deadline`; returns the call count.
async fn hammer(
    service: &Service,
    inflight: u64,
    deadline: Instant,
    limit: u64,
) -> Result<u64, Error> {
    let left = std::cell::Cell::new(limit);
    let worker = || async {
        let mut n = 0u64;
        while Instant::now() < deadline && left.get() > 0 {
            left.set(left.get() - 1);
            echo(service).await?;
            n += 1;
        }
        Ok::<u64, Error>(n)
    };
    let counts = futures::future::try_join_all((0..inflight).map(|_| worker())).await?;
    Ok(counts.iter().sum())
}

/// Throughput with `inflight` calls in flight for `seconds`, and CPU per call.
async fn tp(spec: &Spec) -> Result<Value, Error> {
    let service = connect(spec, Handler::default()).await?;
    let inflight = spec.num("inflight", 16);
    let far = Instant::now() + Duration::from_secs(3600);
    hammer(&service, inflight, far, spec.num("warmup", 500)).await?;
    let cpu0 = cpu_us();
    let t = Instant::now();
    let seconds = spec.raw["seconds"].as_f64().unwrap_or(5.0);
    let deadline = t + Duration::from_secs_f64(seconds);
    let count = hammer(&service, inflight, deadline, u64::MAX).await?;
    let elapsed = t.elapsed().as_secs_f64();
    let cpu = (cpu_us() - cpu0) / count as f64;
    close(service).await;
    Ok(json!({ "tp": count as f64 / elapsed, "cpu": cpu, "calls": count }))
}

/// Sequential calls of `big` (a 1 MiB text result): median ms per call.
async fn big(spec: &Spec) -> Result<Value, Error> {
    let service = connect(spec, Handler::default()).await?;
    let params = CallToolRequestParams::new("big");
    let bytes = spec.num("bytes", 1 << 20) as usize;
    let mut times = Vec::new();
    for i in 0..(spec.num("warmup", 3) + spec.num("calls", 20)) {
        let t = Instant::now();
        let r = service.call_tool(params.clone()).await?;
        let ms = ms_since(t);
        if text_of(&r).len() != bytes {
            return Err(format!("big: {} bytes, expected {bytes}", text_of(&r).len()).into());
        }
        if i >= spec.num("warmup", 3) {
            times.push(ms);
        }
    }
    close(service).await;
    Ok(json!({ "ms": median(times) }))
}

/// Connect (+ a full `tools/list` when `list` is set), `runs` times: median ms.
async fn connect_runs(spec: &Spec, list: bool) -> Result<Value, Error> {
    let expected = spec.num("tools", 0) as usize;
    let mut times = Vec::new();
    for i in 0..(1 + spec.num("runs", 5)) {
        let t = Instant::now();
        let service = connect(spec, Handler::default()).await?;
        if list {
            let tools = service.list_all_tools().await?;
            if tools.len() != expected {
                return Err(format!("listed {} tools, expected {expected}", tools.len()).into());
            }
        }
        let ms = ms_since(t);
        close(service).await;
        if i > 0 {
            times.push(ms); // the first run warms up
        }
    }
    Ok(json!({ "ms": median(times) }))
}

/// The untimed pause between refreshes (`REFRESH_PAUSE_MS` of
/// `bench/driver.mjs`: past the host's re-list pacing).
const REFRESH_PAUSE: Duration = Duration::from_millis(150);

/// `touch_tools` makes the server change its list and send
/// `notifications/tools/list_changed`; time from the call until the new list
/// is listed again (median ms of `runs`); `seenMs` until the call returned
/// and the notification came, `listMs` from then (the `tools/list` round
/// trip), each a median of its own, as `bench/driver.mjs` reports them;
/// refreshes [`REFRESH_PAUSE`] apart, as there.
async fn refresh(spec: &Spec) -> Result<Value, Error> {
    let handler = Handler::default();
    let changed = handler.changed.clone();
    let service = connect(spec, handler).await?;
    let expected = spec.num("tools", 0) as usize;
    let first = service.list_all_tools().await?;
    let mut generation = first
        .iter()
        .find(|t| t.name == "tool_0000")
        .map(|t| t.description.clone());
    let (mut times, mut seen, mut listing) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..(1 + spec.num("runs", 5)) {
        let t = Instant::now();
        service
            .call_tool(CallToolRequestParams::new("touch_tools"))
            .await?;
        changed.notified().await;
        let seen_ms = ms_since(t);
        let tools = service.list_all_tools().await?;
        let ms = ms_since(t);
        let now = tools
            .iter()
            .find(|t| t.name == "tool_0000")
            .map(|t| t.description.clone());
        if tools.len() != expected || now == generation {
            return Err(format!("refresh: {} tools, description {now:?}", tools.len()).into());
        }
        generation = now;
        if i > 0 {
            times.push(ms);
            seen.push(seen_ms);
            listing.push(ms - seen_ms);
        }
        tokio::time::sleep(REFRESH_PAUSE).await;
    }
    close(service).await;
    Ok(json!({ "ms": median(times), "seenMs": median(seen), "listMs": median(listing) }))
}

/// RSS after connecting and 100 calls (KiB).
async fn rss(spec: &Spec) -> Result<Value, Error> {
    let service = connect(spec, Handler::default()).await?;
    service.list_all_tools().await?;
    for _ in 0..100 {
        echo(&service).await?;
    }
    let kib = rss_kib();
    close(service).await;
    Ok(json!({ "rss": kib }))
}

/// `calls` echo calls at `inflight`, RSS sampled every `every` calls (KiB).
async fn soak(spec: &Spec) -> Result<Value, Error> {
    let service = connect(spec, Handler::default()).await?;
    let far = Instant::now() + Duration::from_secs(3600);
    let (calls, every) = (spec.num("calls", 100_000), spec.num("every", 20_000));
    let mut samples = vec![rss_kib()];
    let mut done = 0;
    while done < calls {
        done += hammer(
            &service,
            spec.num("inflight", 16),
            far,
            every.min(calls - done),
        )
        .await?;
        samples.push(rss_kib());
    }
    close(service).await;
    Ok(json!({ "rss": samples }))
}

/// `count` servers connected (initialize + tools/list) at once: ms until all are.
async fn servers(spec: &Spec) -> Result<Value, Error> {
    let t = Instant::now();
    let one = || async {
        let service = connect(spec, Handler::default()).await?;
        service.list_all_tools().await?;
        Ok::<Service, Error>(service)
    };
    let all = futures::future::try_join_all((0..spec.num("count", 20)).map(|_| one())).await?;
    let ms = ms_since(t);
    futures::future::join_all(all.into_iter().map(close)).await;
    Ok(json!({ "ms": ms }))
}

async fn run(spec: Spec) -> Result<Value, Error> {
    match spec.str("scenario") {
        "seq" => seq(&spec).await,
        "tp" => tp(&spec).await,
        "big" => big(&spec).await,
        "connect" => connect_runs(&spec, false).await,
        "list" => connect_runs(&spec, true).await,
        "refresh" => refresh(&spec).await,
        "rss" => rss(&spec).await,
        "soak" => soak(&spec).await,
        "servers" => servers(&spec).await,
        other => Err(format!("unknown scenario {other:?}").into()),
    }
}

fn main() {
    let arg = std::env::args().nth(1).unwrap_or_default();
    let raw: Value = match serde_json::from_str(&arg) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("ahp-bench-floor: bad spec {arg:?}: {e}");
            std::process::exit(2);
        }
    };
    let http = (raw["transport"] == "http").then(reqwest::Client::new);
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("ahp-bench-floor: no tokio runtime: {e}");
            std::process::exit(2);
        }
    };
    let out = rt.block_on(run(Spec { raw, http }));
    match out {
        Ok(v) => println!("{v}"),
        Err(e) => {
            eprintln!("ahp-bench-floor: {e}");
            std::process::exit(1);
        }
    }
}
