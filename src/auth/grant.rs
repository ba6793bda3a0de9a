//! One host-run OAuth grant, whichever it is (MCP 2025-11-25
//! "Authorization"): the authorization code flow with PKCE (a user signs in
//! in a browser), the client credentials grant (SEP-1046, no user),
//! enterprise-managed authorization (SEP-990 cross-app access, an enterprise
//! ID token) or workload identity federation (SEP-1933, a workload JWT
//! redeemed with the RFC 7523 JWT-bearer grant). The flows themselves are in
//! [`super::flow`] and [`super::jwt_bearer`]; this module only dispatches
//! over [`Grant`].

use std::sync::Arc;

use rmcp::transport::auth::AuthorizationManager;
use tokio::sync::mpsc;
use url::Url;

use super::flow::{client_credentials, enterprise_managed, sign_in, SignIn};
use super::jwt_bearer::jwt_bearer;
use super::store::{RefreshLocks, SecretStore};
use crate::error::{ErrorCode, HostError, HostResult};
use crate::events::DeviceCodePrompt;
// Moves with `IdpSetting` (review §2.3: to `config`), like the path in `flow.rs`.
use crate::config::IdpSetting;

/// The grant a sign-in runs, with the settings only that grant needs.
#[derive(Clone)]
pub enum Grant {
    /// Authorization code with PKCE: the app opens the authorization URL.
    AuthorizationCode,
    /// Client credentials: `clientSecret` (in [`SignIn::identity`]) or a PEM
    /// key for `private_key_jwt` (RFC 7523).
    ClientCredentials {
        /// PEM private key (a secret).
        private_key_pem: Option<String>,
        /// Its JWS algorithm; default `ES256`.
        signing_algorithm: Option<String>,
    },
    /// Enterprise-managed: `id_token` → ID-JAG at `idp` (RFC 8693) → access
    /// token at the MCP authorization server (RFC 7523 JWT bearer).
    EnterpriseManaged {
        /// The enterprise IdP.
        idp: IdpSetting,
        /// The client secret at the MCP authorization server (a secret).
        client_secret: Option<String>,
        /// The enterprise ID token (a secret).
        id_token: String,
    },
    /// Workload identity federation: `assertion` → access token at the MCP
    /// authorization server (RFC 7523 §2.1 JWT-bearer grant).
    JwtBearer {
        /// The client secret at the authorization server, if any (a secret).
        client_secret: Option<String>,
        /// The workload JWT (a secret).
        assertion: String,
    },
}

/// What a grant yields.
pub enum Granted {
    /// A manager holding (and refreshing) the tokens: authorization code and
    /// client credentials.
    Manager(Box<AuthorizationManager>),
    /// A bare access token (a secret), never refreshed: enterprise-managed,
    /// JWT bearer.
    AccessToken(String),
}

/// Runs `grant` for the server of `opts`. `announce` receives the
/// authorization URL of an authorization code flow, or the verification
/// URL and user code of a device authorization grant (and is not called
/// for the other grants); `pasted` brings the callback URLs the app hands
/// back (authorization code flow only). Not raced against anything: the
/// caller bounds it.
///
/// # Errors
/// Those of [`sign_in`], [`client_credentials`], [`enterprise_managed`] or
/// [`jwt_bearer`] (`auth_failed`, `auth_denied`, `timeout`,
/// `invalid_argument`, `not_supported`, `cancelled`), and
/// `internal` when the blocking thread of a grant fails.
pub async fn run_grant(
    grant: Grant,
    opts: &SignIn,
    (secrets, locks): (&Arc<dyn SecretStore>, &Arc<RefreshLocks>),
    pasted: mpsc::Receiver<Url>,
    announce: impl FnOnce(String, Option<DeviceCodePrompt>),
) -> HostResult<Granted> {
    match grant {
        Grant::AuthorizationCode => sign_in(opts, (secrets, locks), pasted, announce)
            .await
            .map(|m| Granted::Manager(Box::new(m))),
        Grant::ClientCredentials {
            private_key_pem,
            signing_algorithm,
        } => {
            let (opts, secrets, locks) = (opts.clone(), secrets.clone(), locks.clone());
            on_blocking_thread("client credentials", move |runtime| {
                let algorithm = signing_algorithm.as_deref().unwrap_or("ES256");
                let key = private_key_pem.as_deref().map(|pem| (pem, algorithm));
                runtime.block_on(client_credentials(&opts, key, &secrets, &locks))
            })
            .await
            .map(|m| Granted::Manager(Box::new(m)))
        }
        Grant::EnterpriseManaged {
            idp,
            client_secret,
            id_token,
        } => {
            let opts = opts.clone();
            on_blocking_thread("enterprise-managed", move |runtime| {
                let secret = client_secret.as_deref();
                runtime.block_on(enterprise_managed(&opts, &idp, secret, &id_token))
            })
            .await
            .map(Granted::AccessToken)
        }
        Grant::JwtBearer {
            client_secret,
            assertion,
        } => jwt_bearer(opts, client_secret.as_deref(), &assertion)
            .await
            .map(Granted::AccessToken),
    }
}

/// Runs `work` on a blocking thread, handing it the runtime handle.
///
/// Non-`Send` rmcp future: rmcp's client credentials (`private_key_jwt`) and
/// enterprise-managed exchange futures are not `Send`, so they cannot be
/// awaited in a `Send` task; `spawn_blocking` + `block_on` drives them on a
/// thread of their own. `what` names the grant in the `internal` error of a
/// failed (panicked) thread: `"<what> task failed: …"`.
async fn on_blocking_thread<T: Send + 'static>(
    what: &'static str,
    work: impl FnOnce(&tokio::runtime::Handle) -> HostResult<T> + Send + 'static,
) -> HostResult<T> {
    let runtime = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || work(&runtime))
        .await
        .unwrap_or_else(|e| {
            Err(HostError::new(
                ErrorCode::Internal,
                format!("{what} task failed: {e}"),
            ))
        })
}
