//! The app's allow and deny rules for servers ([`ServerPolicy`], host
//! option `policy` and `setPolicy`), as VS Code's
//! `chat.mcp.allowedServers` and Claude Code's `managed-mcp.json`
//! (`allowedMcpServers` / `deniedMcpServers`) have them, pure: compiled
//! once, evaluated against a server's [`Subject`].
//!
//! A rule ([`PolicyRule`]) has one or more matchers, all of which must
//! match: `name` (the server's name, or with a `/` its id
//! `<plugin>/<server>`), `plugin` (the plugin's name), `command` (a stdio
//! server's configured command, or without a `/` its last path segment),
//! `args` (a stdio server's configured arguments, one pattern each, the
//! same count), `url` (a remote server's URL without user info, query and
//! fragment, `scheme://host[:port][/path]`, each part matched on its own:
//! `super::url_pattern`; a pattern without a path matches every path of
//! its origin), `transport`. Patterns are globs: `*` any run of characters
//! (`/` included), `?` one character (not in `url`, where a `?` would be
//! read as a query); case-sensitive, except the scheme and host of a `url`
//! pattern and the path of one in a `deny` rule.
//!
//! Evaluation: a matching `deny` rule wins over everything; then, when
//! `allow` is given (an empty list included: nothing is allowed), a server
//! no `allow` rule matches is denied; else the server is allowed. A rule
//! that cannot be compiled refuses the whole policy (`invalid_argument`
//! naming its field): a security policy is never applied in part.

use serde::Serialize;

use super::url_pattern::UrlPattern;
use crate::catalogue::filter::Pattern as Glob;
use crate::error::{ErrorCode, HostError, HostResult};
use crate::limits::{MAX_POLICY_ARGS, MAX_POLICY_PATTERN_BYTES, MAX_POLICY_RULES};

/// A transport a rule names (`transport`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleTransport {
    /// `"stdio"`: a local process.
    Stdio,
    /// `"streamable-http"`.
    StreamableHttp,
    /// `"sse"`: legacy HTTP+SSE.
    Sse,
}

impl RuleTransport {
    /// The JS name (`"stdio"`, `"streamable-http"`, `"sse"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stdio => "stdio",
            Self::StreamableHttp => "streamable-http",
            Self::Sse => "sse",
        }
    }
}

/// One allow or deny rule as the app writes it (JS `PolicyRule`): every
/// matcher given must match; at least one must be given.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PolicyRule {
    /// Shown in decisions and messages (`deny[0] ("no shell servers")`).
    pub label: Option<String>,
    /// Glob over the server's name; with a `/`, over its id.
    pub name: Option<String>,
    /// Glob over the name of the plugin that declares the server (a
    /// top-level server has none, so never matches).
    pub plugin: Option<String>,
    /// Glob over a stdio server's configured `command`; without a `/` or
    /// `\`, also over its last path segment (`node` matches `/usr/bin/node`).
    pub command: Option<String>,
    /// Globs over a stdio server's configured `args`, one each (the same count).
    pub args: Option<Vec<String>>,
    /// Pattern over a remote server's URL without user info, query and
    /// fragment: `scheme://host[:port][/path]` (`super::url_pattern`).
    pub url: Option<String>,
    /// The transport.
    pub transport: Option<RuleTransport>,
}

/// What a rule is matched against: the server's configuration as it was
/// given (never a secret value).
#[derive(Debug, Clone, PartialEq)]
pub struct Subject {
    /// The customization id (`<plugin>/<server>` for a plugin's server).
    pub id: String,
    /// The server's name (its `mcpServers` key, or a top-level server's id).
    pub name: String,
    /// The plugin that declares it.
    pub plugin: Option<String>,
    /// Its transport.
    pub transport: RuleTransport,
    /// A stdio server's configured command.
    pub command: Option<String>,
    /// A stdio server's configured arguments.
    pub args: Vec<String>,
    /// A remote server's URL without user info, query and fragment.
    pub url: Option<String>,
}

/// What the rules say about one server (JS `PolicyVerdict`, under
/// `rules` of a `ServerPolicyDecision`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Verdict {
    /// Whether the server may start.
    pub allowed: bool,
    /// The rule that decided, `deny[<i>]` or `allow[<i>]`; none when no
    /// rule matched (allowed without an allow list, or denied by one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// That rule's label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Why, in words.
    pub message: String,
}

impl Verdict {
    /// The `policy_denied` error of server `id` (for a denied verdict).
    pub fn error(&self, id: &str) -> HostError {
        HostError::new(
            ErrorCode::PolicyDenied,
            format!("server {id:?} is {}", self.message),
        )
    }
}

/// A compiled [`PolicyRule`].
#[derive(Debug, Clone)]
struct Rule {
    label: Option<String>,
    name: Option<Glob>,
    plugin: Option<Glob>,
    command: Option<Glob>,
    args: Option<Vec<Glob>>,
    url: Option<UrlPattern>,
    transport: Option<RuleTransport>,
}

/// The app's server policy (see the module documentation). `Default`: no
/// rule, every server allowed.
#[derive(Debug, Clone, Default)]
pub struct ServerPolicy {
    allow: Option<Vec<Rule>>,
    deny: Vec<Rule>,
}

impl ServerPolicy {
    /// Compiles `allow` (`None`: no allow list) and `deny`; `path` prefixes
    /// the field of an error (`options.policy`, `policy`).
    ///
    /// # Errors
    /// `invalid_argument` naming the field: more than [`MAX_POLICY_RULES`]
    /// rules in a list, a rule without any matcher, an empty pattern or
    /// label, one over [`MAX_POLICY_PATTERN_BYTES`], more than
    /// [`MAX_POLICY_ARGS`] `args`, a `url` pattern with `?`, `#` or user
    /// info, or not of the form `scheme://host[:port][/path]`.
    pub fn new(
        allow: Option<Vec<PolicyRule>>,
        deny: Vec<PolicyRule>,
        path: &str,
    ) -> HostResult<Self> {
        let allow = match allow {
            Some(rules) => Some(compile_list(rules, &format!("{path}.allow"), false)?),
            None => None,
        };
        let deny = compile_list(deny, &format!("{path}.deny"), true)?;
        Ok(Self { allow, deny })
    }

    /// Whether the policy has no rule and no allow list (every server allowed).
    pub fn is_empty(&self) -> bool {
        self.allow.is_none() && self.deny.is_empty()
    }

    /// What the rules say about `subject`: deny wins, then the allow list.
    pub fn evaluate(&self, subject: &Subject) -> Verdict {
        let found = |rules: &[Rule]| rules.iter().position(|r| r.matches(subject));
        let named = |list: &str, i: usize, rules: &[Rule]| {
            let label = rules[i].label.clone();
            let shown = match &label {
                Some(l) => format!("{list}[{i}] ({l:?})"),
                None => format!("{list}[{i}]"),
            };
            (Some(format!("{list}[{i}]")), label, shown)
        };
        if let Some(i) = found(&self.deny) {
            let (rule, label, shown) = named("deny", i, &self.deny);
            let message = format!("denied by policy rule {shown}");
            return Verdict {
                allowed: false,
                rule,
                label,
                message,
            };
        }
        let Some(allow) = &self.allow else {
            let message = "allowed by policy (no deny rule matches, no allow list)".to_owned();
            return Verdict {
                allowed: true,
                rule: None,
                label: None,
                message,
            };
        };
        match found(allow) {
            Some(i) => {
                let (rule, label, shown) = named("allow", i, allow);
                let message = format!("allowed by policy rule {shown}");
                Verdict {
                    allowed: true,
                    rule,
                    label,
                    message,
                }
            }
            None => Verdict {
                allowed: false,
                rule: None,
                label: None,
                message: format!(
                    "not allowed by policy: no rule of the allow list ({} rules) matches",
                    allow.len()
                ),
            },
        }
    }
}

impl Rule {
    fn matches(&self, s: &Subject) -> bool {
        let name = self
            .name
            .as_ref()
            .is_none_or(|g| match g.text().contains('/') {
                true => g.matches(&s.id),
                false => g.matches(&s.name),
            });
        let plugin = (self.plugin.as_ref())
            .is_none_or(|g| s.plugin.as_deref().is_some_and(|p| g.matches(p)));
        let command = self.command.as_ref().is_none_or(|g| {
            s.command.as_deref().is_some_and(|c| {
                let path = g.text().contains(['/', '\\']);
                g.matches(c) || (!path && g.matches(last_segment(c)))
            })
        });
        let args = self.args.as_ref().is_none_or(|globs| {
            s.command.is_some()
                && globs.len() == s.args.len()
                && globs.iter().zip(&s.args).all(|(g, a)| g.matches(a))
        });
        let url =
            (self.url.as_ref()).is_none_or(|p| s.url.as_deref().is_some_and(|u| p.matches(u)));
        let transport = self.transport.is_none_or(|t| t == s.transport);
        name && plugin && command && args && url && transport
    }
}

/// The last segment of a command path (`/usr/bin/node` → `node`).
fn last_segment(command: &str) -> &str {
    command.rsplit(['/', '\\']).next().unwrap_or(command)
}

fn invalid(field: &str, why: &str) -> HostError {
    HostError::new(ErrorCode::InvalidArgument, format!("{field}: {why}"))
}

/// The rules of `path`; `deny`: a `deny` list (its `url` paths ignore case).
fn compile_list(rules: Vec<PolicyRule>, path: &str, deny: bool) -> HostResult<Vec<Rule>> {
    if rules.len() > MAX_POLICY_RULES {
        let why = format!("at most {MAX_POLICY_RULES} rules, got {}", rules.len());
        return Err(invalid(path, &why));
    }
    let at = |i: usize| format!("{path}[{i}]");
    (rules.into_iter().enumerate())
        .map(|(i, rule)| compile(rule, &at(i), deny))
        .collect()
}

fn compile(rule: PolicyRule, path: &str, deny: bool) -> HostResult<Rule> {
    let field = |name: &str| format!("{path}.{name}");
    let glob = |name: &str, text: Option<String>| -> HostResult<Option<Glob>> {
        text.map(|t| pattern(&field(name), t)).transpose()
    };
    let url = match rule.url {
        Some(text) if text.contains(['?', '#']) => {
            let why = "must not contain `?` or `#` (a URL is matched without its query and fragment; `*` is the wildcard)";
            return Err(invalid(&field("url"), why));
        }
        Some(text) => {
            check_text(&field("url"), &text)?;
            let url = UrlPattern::new(&text, deny).map_err(|why| invalid(&field("url"), &why))?;
            Some(url)
        }
        None => None,
    };
    let args = match rule.args {
        Some(args) if args.len() > MAX_POLICY_ARGS => {
            let why = format!("at most {MAX_POLICY_ARGS} patterns, got {}", args.len());
            return Err(invalid(&field("args"), &why));
        }
        Some(args) => Some(
            (args.into_iter().enumerate())
                .map(|(i, a)| pattern(&format!("{}[{i}]", field("args")), a))
                .collect::<HostResult<Vec<_>>>()?,
        ),
        None => None,
    };
    if let Some(label) = &rule.label {
        check_text(&field("label"), label)?;
    }
    let compiled = Rule {
        label: rule.label,
        name: glob("name", rule.name)?,
        plugin: glob("plugin", rule.plugin)?,
        command: glob("command", rule.command)?,
        args,
        url,
        transport: rule.transport,
    };
    let any = compiled.name.is_some()
        || compiled.plugin.is_some()
        || compiled.command.is_some()
        || compiled.args.is_some()
        || compiled.url.is_some()
        || compiled.transport.is_some();
    if !any {
        let why = "a rule needs at least one of name, plugin, command, args, url, transport";
        return Err(invalid(path, why));
    }
    Ok(compiled)
}

fn pattern(field: &str, text: String) -> HostResult<Glob> {
    check_text(field, &text)?;
    Ok(Glob::new(text))
}

/// A pattern or label: not empty, at most [`MAX_POLICY_PATTERN_BYTES`].
fn check_text(field: &str, text: &str) -> HostResult<()> {
    match text.len() {
        0 => Err(invalid(field, "must not be empty")),
        n if n > MAX_POLICY_PATTERN_BYTES => Err(invalid(
            field,
            &format!("at most {MAX_POLICY_PATTERN_BYTES} bytes, got {n}"),
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
#[path = "rules_tests.rs"]
mod tests;
