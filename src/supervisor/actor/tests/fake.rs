//! The scripted [`Connector`] of the actor tests: each connection attempt
//! does what the test queued ([`Attempt`]), and the test keeps each fake
//! connection's controls ([`Control`]).

use super::*;

/// What the next connection attempt does.
pub(super) enum Attempt {
    Ready,
    Challenge,
    Fail(HostError),
    Hang,
}

/// One fake connection's controls, kept by the test.
#[derive(Clone)]
pub(super) struct Control {
    pub(super) crash: watch::Sender<Option<String>>,
    pub(super) notices: mpsc::UnboundedSender<Notice>,
    pub(super) bearer: BearerCell,
    pub(super) closed: Arc<Mutex<Option<&'static str>>>,
}

/// A scripted connector that records what it was asked.
#[derive(Default)]
pub(super) struct Fake {
    pub(super) script: Mutex<VecDeque<Attempt>>,
    pub(super) auths: Mutex<Vec<String>>,
    pub(super) conns: Mutex<Vec<Control>>,
    pub(super) listings: Arc<AtomicUsize>,
    pub(super) abandoned: Arc<AtomicUsize>,
    /// Whether each listing also has `job`, a tool the catalogue leaves
    /// out with a diagnostic (its `execution.taskSupport` is `required`).
    pub(super) lists_job: Arc<AtomicBool>,
}

pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Fake {
    pub(super) fn new(script: impl IntoIterator<Item = Attempt>) -> Arc<Self> {
        let fake = Self::default();
        lock(&fake.script).extend(script);
        Arc::new(fake)
    }

    pub(super) fn conn(&self, n: usize) -> Control {
        lock(&self.conns)[n].clone()
    }

    pub(super) fn auths(&self) -> Vec<String> {
        lock(&self.auths).clone()
    }
}

/// Counts an attempt dropped while it hung.
pub(super) struct DropCount(Arc<AtomicUsize>);

impl Drop for DropCount {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

pub(super) struct FakeConnection {
    pub(super) control: Control,
    pub(super) ended: watch::Receiver<Option<String>>,
    pub(super) notices: Option<mpsc::UnboundedReceiver<Notice>>,
    pub(super) listings: Arc<AtomicUsize>,
    pub(super) lists_job: Arc<AtomicBool>,
}

impl Connector for Fake {
    type Connection = FakeConnection;

    async fn open<'a>(
        &'a self,
        _shared: &'a Arc<HostShared>,
        _spec: &'a ServerSpec,
        auth: HttpAuth<'a>,
        _tasks: &'a ServerTasks,
    ) -> Result<FakeConnection, RequestFailure> {
        let seen = match auth {
            HttpAuth::None => "none".to_owned(),
            HttpAuth::Bearer(token) => format!("bearer {token}"),
            HttpAuth::OAuth(_) => "oauth".to_owned(),
        };
        lock(&self.auths).push(seen);
        let next = lock(&self.script).pop_front().unwrap_or(Attempt::Hang);
        match next {
            Attempt::Ready => Ok(self.connection()),
            Attempt::Challenge => Err(RequestFailure::Auth(r#"Bearer scope="files:read""#.into())),
            Attempt::Fail(e) => Err(e.into()),
            Attempt::Hang => {
                let _guard = DropCount(self.abandoned.clone());
                std::future::pending().await
            }
        }
    }

    async fn discover<'a>(
        &'a self,
        _shared: &'a Arc<HostShared>,
        _endpoint: (&'a url::Url, Option<&'a crate::config::OAuthClientSetting>),
        _challenge: &'a AuthChallenge,
        _restore: bool,
    ) -> Result<Discovered, HostError> {
        let resource = json!({
            "resource": "https://mcp.example.test/mcp",
            "authorization_servers": ["https://as.example.test"],
        });
        serde_json::from_value(resource)
            .map(|r| Discovered::Resource(Box::new(r)))
            .map_err(|e| HostError::new(ErrorCode::Internal, e.to_string()))
    }
}

impl Fake {
    pub(super) fn connection(&self) -> FakeConnection {
        let (crash, ended) = watch::channel(None);
        let (notices_tx, notices) = mpsc::unbounded_channel();
        let control = Control {
            crash,
            notices: notices_tx,
            bearer: Arc::default(),
            closed: Arc::default(),
        };
        lock(&self.conns).push(control.clone());
        FakeConnection {
            control,
            ended,
            notices: Some(notices),
            listings: self.listings.clone(),
            lists_job: self.lists_job.clone(),
        }
    }
}

impl ServerConnection for FakeConnection {
    fn live(&self, _closed: watch::Receiver<Option<String>>) -> Option<Session> {
        None
    }

    fn bearer(&self) -> Option<BearerCell> {
        Some(self.control.bearer.clone())
    }

    fn take_notices(&mut self) -> mpsc::UnboundedReceiver<Notice> {
        self.notices
            .take()
            .unwrap_or_else(|| mpsc::unbounded_channel().1)
    }

    fn ended(&self) -> BoxFuture<String> {
        let mut ended = self.ended.clone();
        Box::pin(async move {
            let reason = ended
                .wait_for(Option::is_some)
                .await
                .ok()
                .and_then(|r| r.clone());
            match reason {
                Some(reason) => reason,
                None => std::future::pending().await,
            }
        })
    }

    async fn list_tools<'a>(
        &'a self,
        _server_id: &'a str,
        _limits: &'a Limits,
    ) -> Result<Vec<Box<serde_json::value::RawValue>>, RequestFailure> {
        // Read before the count moves: a test that waits for the count
        // may then change it for the next listing only.
        let job = self.lists_job.load(Ordering::SeqCst);
        self.listings.fetch_add(1, Ordering::SeqCst);
        let mut tools = vec![json!({ "name": "echo", "inputSchema": { "type": "object" } })];
        if job {
            let job = json!({ "name": "job", "inputSchema": { "type": "object" }, "execution": { "taskSupport": "required" } });
            tools.push(job);
        }
        Ok(tools
            .iter()
            .map(|t| serde_json::value::to_raw_value(t).expect("JSON"))
            .collect())
    }

    async fn close(self) {
        *lock(&self.control.closed) = Some("closed");
    }

    async fn discard(self) {
        *lock(&self.control.closed) = Some("discarded");
    }
}
