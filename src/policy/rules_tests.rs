use super::*;

fn stdio(id: &str, command: &str, args: &[&str]) -> Subject {
    let (plugin, name) = match id.split_once('/') {
        Some((p, n)) => (Some(p.to_owned()), n.to_owned()),
        None => (None, id.to_owned()),
    };
    Subject {
        id: id.to_owned(),
        name,
        plugin,
        transport: RuleTransport::Stdio,
        command: Some(command.to_owned()),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        url: None,
    }
}

fn http(id: &str, url: &str) -> Subject {
    Subject {
        id: id.to_owned(),
        name: id.to_owned(),
        plugin: None,
        transport: RuleTransport::StreamableHttp,
        command: None,
        args: Vec::new(),
        url: Some(url.to_owned()),
    }
}

fn rule(f: impl FnOnce(&mut PolicyRule)) -> PolicyRule {
    let mut r = PolicyRule::default();
    f(&mut r);
    r
}

fn policy(allow: Option<Vec<PolicyRule>>, deny: Vec<PolicyRule>) -> ServerPolicy {
    ServerPolicy::new(allow, deny, "policy").unwrap()
}

#[test]
fn deny_wins_over_allow_and_names_its_rule() {
    let p = policy(
        Some(vec![rule(|r| r.name = Some("*".into()))]),
        vec![rule(|r| {
            r.command = Some("bash".into());
            r.label = Some("no shells".into());
        })],
    );
    let v = p.evaluate(&stdio("sh", "/bin/bash", &["-c", "x"]));
    assert!(!v.allowed);
    assert_eq!(v.rule.as_deref(), Some("deny[0]"));
    assert_eq!(v.label.as_deref(), Some("no shells"));
    assert_eq!(v.message, "denied by policy rule deny[0] (\"no shells\")");
    let e = v.error("sh");
    assert_eq!(e.code, ErrorCode::PolicyDenied);
    assert!(e.message.contains("deny[0]"), "{}", e.message);
    let ok = p.evaluate(&stdio("py", "python3", &[]));
    assert!(ok.allowed);
    assert_eq!(ok.rule.as_deref(), Some("allow[0]"));
}

#[test]
fn an_allow_list_means_only_these_and_an_empty_one_nothing() {
    let p = policy(Some(vec![rule(|r| r.name = Some("git*".into()))]), vec![]);
    assert!(p.evaluate(&stdio("github", "node", &[])).allowed);
    let v = p.evaluate(&stdio("other", "node", &[]));
    assert!(!v.allowed && v.rule.is_none());
    assert!(v.message.contains("allow list (1 rules)"), "{}", v.message);
    let locked = policy(Some(vec![]), vec![]);
    assert!(!locked.is_empty());
    assert!(!locked.evaluate(&stdio("any", "node", &[])).allowed);
    let open = ServerPolicy::default();
    assert!(open.is_empty() && open.evaluate(&stdio("any", "node", &[])).allowed);
}

#[test]
fn matchers_name_id_plugin_command_args_url_transport() {
    let deny = |f: fn(&mut PolicyRule)| policy(None, vec![rule(f)]);
    let denied = |p: &ServerPolicy, s: &Subject| !p.evaluate(s).allowed;
    // A name without `/` is the server's name; with one, its id.
    let by_name = deny(|r| r.name = Some("tools".into()));
    assert!(denied(&by_name, &stdio("p/tools", "node", &[])));
    let by_id = deny(|r| r.name = Some("p/*".into()));
    assert!(denied(&by_id, &stdio("p/tools", "node", &[])));
    assert!(!denied(&by_id, &stdio("q/tools", "node", &[])));
    let by_plugin = deny(|r| r.plugin = Some("p".into()));
    assert!(denied(&by_plugin, &stdio("p/x", "node", &[])));
    assert!(!denied(&by_plugin, &stdio("p", "node", &[])), "top-level");
    // A command without `/` matches the last segment too; with one, the whole.
    let by_command = deny(|r| r.command = Some("node".into()));
    assert!(denied(&by_command, &stdio("a", "/usr/bin/node", &[])));
    assert!(!denied(&by_command, &stdio("a", "/usr/bin/nodejs", &[])));
    let by_path = deny(|r| r.command = Some("/opt/*".into()));
    assert!(denied(&by_path, &stdio("a", "/opt/x/bin", &[])));
    assert!(!denied(&by_path, &stdio("a", "/usr/opt/x", &[])));
    assert!(!denied(&by_command, &http("a", "https://node/")));
    // Args: one pattern each, the same count (Claude Code's exact command).
    let exact = deny(|r| {
        r.command = Some("npx".into());
        r.args = Some(vec!["-y".into(), "evil-*".into()]);
    });
    assert!(denied(&exact, &stdio("a", "npx", &["-y", "evil-pkg"])));
    assert!(!denied(&exact, &stdio("a", "npx", &["evil-pkg"])));
    assert!(!denied(
        &exact,
        &stdio("a", "npx", &["-y", "evil-pkg", "--x"])
    ));
    // URL: an origin pattern matches every path; scheme and host any case.
    let origin = deny(|r| r.url = Some("HTTPS://*.Example.com".into()));
    assert!(denied(
        &origin,
        &http("a", "https://mcp.example.com/v1/mcp")
    ));
    assert!(!denied(&origin, &http("a", "https://example.com/")));
    assert!(!denied(&origin, &stdio("a", "node", &[])));
    let path = deny(|r| r.url = Some("http://127.0.0.1:*/mcp".into()));
    assert!(denied(&path, &http("a", "http://127.0.0.1:8080/mcp")));
    assert!(!denied(&path, &http("a", "http://127.0.0.1:8080/other")));
    let transport = deny(|r| r.transport = Some(RuleTransport::Stdio));
    assert!(denied(&transport, &stdio("a", "node", &[])));
    assert!(!denied(&transport, &http("a", "https://x.test/")));
    // All matchers of a rule must match.
    let both = deny(|r| {
        r.plugin = Some("p".into());
        r.name = Some("x".into());
    });
    assert!(denied(&both, &stdio("p/x", "node", &[])));
    assert!(!denied(&both, &stdio("p/y", "node", &[])));
}

#[test]
fn a_broken_rule_refuses_the_policy_naming_its_field() {
    let err = |allow: Option<Vec<PolicyRule>>, deny: Vec<PolicyRule>| {
        let e = ServerPolicy::new(allow, deny, "options.policy").unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        e.message
    };
    let m = err(
        None,
        vec![rule(|r| r.name = Some("a".into())), rule(|_| {})],
    );
    assert!(m.starts_with("options.policy.deny[1]: a rule needs"), "{m}");
    let m = err(
        Some(vec![rule(|r| r.url = Some("https://x/?k=*".into()))]),
        vec![],
    );
    assert!(
        m.starts_with("options.policy.allow[0].url: must not contain"),
        "{m}"
    );
    let m = err(None, vec![rule(|r| r.command = Some(String::new()))]);
    assert_eq!(m, "options.policy.deny[0].command: must not be empty");
    let m = err(
        None,
        vec![rule(|r| r.args = Some(vec!["a".into(), "x".repeat(3000)]))],
    );
    assert!(
        m.starts_with("options.policy.deny[0].args[1]: at most"),
        "{m}"
    );
    let many = (0..=MAX_POLICY_RULES).map(|_| rule(|r| r.name = Some("a".into())));
    let m = err(Some(many.collect()), vec![]);
    assert!(
        m.starts_with("options.policy.allow: at most 1000 rules"),
        "{m}"
    );
}

#[test]
fn a_url_glob_matches_the_host_alone_never_the_path() {
    // The guide's own form: `*` of the host must not reach into the path.
    let p = policy(
        Some(vec![rule(|r| {
            r.url = Some("http://*.mcp.example.com".into())
        })]),
        vec![],
    );
    let allowed = |u: &str| p.evaluate(&http("a", u)).allowed;
    assert!(!allowed("http://127.0.0.1:8080/x.mcp.example.com/mcp"));
    assert!(!allowed("http://127.0.0.1:8080/.mcp.example.com"));
    assert!(allowed("http://a.mcp.example.com/mcp"));
    assert!(allowed("http://A.b.MCP.example.com./v1/mcp"));
    assert!(!allowed("http://127.0.0.1/x.mcp.example.com"));
    assert!(!allowed("http://a.mcp.example.com.evil.test/"));
    assert!(
        !allowed("http://a.mcp.example.com:8080/mcp"),
        "another origin"
    );
    assert!(!allowed("https://a.mcp.example.com/mcp"), "another scheme");
    let any_port = policy(
        Some(vec![rule(|r| {
            r.url = Some("http://localhost:*/mcp".into())
        })]),
        vec![],
    );
    assert!(
        any_port
            .evaluate(&http("a", "http://localhost:9/mcp"))
            .allowed
    );
    assert!(
        !any_port
            .evaluate(&http("a", "http://evil.test/localhost:9/mcp"))
            .allowed
    );
}

#[test]
fn url_patterns_are_normalised_as_server_urls_are() {
    let deny = |u: &str| policy(None, vec![rule(|r| r.url = Some(u.into()))]);
    let denied = |p: &ServerPolicy, u: &str| !p.evaluate(&http("a", u)).allowed;
    // The default port, written or not, on either side.
    let p = deny("http://localhost:80");
    assert!(denied(&p, "http://localhost/mcp"));
    assert!(denied(&p, "http://localhost:80/mcp"));
    assert!(!denied(&p, "http://localhost:8080/mcp"));
    let p = deny("https://x.test");
    assert!(denied(&p, "https://x.test:443/mcp"));
    assert!(!denied(&p, "https://x.test:8443/mcp"));
    // Hosts: case, a trailing dot, percent-escapes, IPv4 and IPv6 forms.
    let forms = [
        (
            "http://LOCALHOST.:*",
            [
                "http://localhost:1/",
                "http://localhost.:1/",
                "http://local%68ost:1/",
            ],
        ),
        (
            "http://127.0.0.1:*",
            [
                "http://127.0.0.1.:1/",
                "http://2130706433:1/",
                "http://0x7f.1:1/",
            ],
        ),
    ];
    for (rule, urls) in forms {
        let p = deny(rule);
        for u in urls {
            assert!(denied(&p, u), "{rule} {u}");
        }
    }
    let p = deny("http://[0:0:0:0:0:0:0:1]:*");
    assert!(denied(&p, "http://[::1]:1/mcp"));
    // Paths: escapes of unreserved characters, `//`, a trailing `/`, dot
    // segments; a deny rule's path ignores case.
    let p = deny("http://localhost:*/mcp");
    for path in [
        "/mcp",
        "/MCP",
        "/%6dcp",
        "/%6Dcp",
        "//mcp",
        "/mcp/",
        "/a/../mcp",
        "/.//mcp//",
    ] {
        assert!(denied(&p, &format!("http://localhost:1{path}")), "{path}");
    }
    assert!(!denied(&p, "http://localhost:1/mcp/x"));
    assert!(!denied(&p, "http://localhost:1/mcpx"));
    let p = deny("http://localhost:*/%4D%43P/");
    assert!(denied(&p, "http://localhost:1/mcp"));
    // An allow rule's path keeps its case (never more than it names).
    let allow = policy(
        Some(vec![rule(|r| {
            r.url = Some("http://localhost:*/mcp/".into())
        })]),
        vec![],
    );
    let allowed = |u: &str| allow.evaluate(&http("a", u)).allowed;
    assert!(allowed("http://localhost:1/mcp") && allowed("http://localhost:1//%6dcp/"));
    assert!(!allowed("http://localhost:1/MCP"));
}

#[test]
fn a_url_pattern_that_is_not_scheme_host_port_path_is_refused() {
    for bad in [
        "*.example.com",
        "*",
        "http://u@x.test",
        "http://x.test:8o",
        "http:///mcp",
    ] {
        let e = ServerPolicy::new(None, vec![rule(|r| r.url = Some(bad.into()))], "policy")
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{bad}");
        assert!(
            e.message.starts_with("policy.deny[0].url: "),
            "{bad}: {}",
            e.message
        );
    }
}
