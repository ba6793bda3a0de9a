use serde_json::json;

use super::*;

fn map(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => panic!("not an object"),
    }
}

#[test]
fn parses_the_block_between_the_dashes() {
    let text = "---\nname: pdf-processing\ndescription: Extract PDFs\nmetadata:\n  version: 1.0\n---\n\nBody\n";
    let fm = parse(text).unwrap();
    assert_eq!(
        Value::Object(fm),
        json!({"name": "pdf-processing", "description": "Extract PDFs", "metadata": {"version": 1.0}})
    );
    let crlf = "\u{feff}---\r\nname: a\r\ndescription: b\r\n---\r\n";
    assert_eq!(parse(crlf).unwrap().len(), 2);
}

#[test]
fn refuses_what_is_not_a_bounded_mapping() {
    assert!(parse("name: a\n").unwrap_err().contains("does not start"));
    assert!(parse("---\nname: a\n").unwrap_err().contains("no closing"));
    assert!(parse("---\n- a\n---\n")
        .unwrap_err()
        .contains("not a YAML mapping"));
    assert!(parse("---\nname: [\n---\n")
        .unwrap_err()
        .contains("not valid YAML"));
    let big = format!(
        "---\nname: \"{}\"\n---\n",
        "x".repeat(MAX_SKILL_FRONTMATTER_BYTES)
    );
    assert!(parse(&big).unwrap_err().contains("bytes"));
    let mut deep = String::from("---\n");
    for i in 0..=MAX_SKILL_FRONTMATTER_DEPTH {
        deep.push_str(&format!("{}k:\n", "  ".repeat(i)));
    }
    deep.push_str(&format!(
        "{}v: 1\n---\n",
        "  ".repeat(MAX_SKILL_FRONTMATTER_DEPTH + 1)
    ));
    assert!(parse(&deep).unwrap_err().contains("deeper"));
    let mut wide = String::from("---\n");
    for i in 0..=MAX_SKILL_FRONTMATTER_KEYS {
        wide.push_str(&format!("k{i}: 1\n"));
    }
    wide.push_str("---\n");
    assert!(parse(&wide).unwrap_err().contains("keys"));
}

#[test]
fn an_alias_bomb_is_refused() {
    let mut yaml = String::from("---\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..10 {
        let p = i - 1;
        yaml.push_str(&format!(
            "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
        ));
    }
    yaml.push_str("---\n");
    assert!(parse(&yaml).is_err());
}

#[test]
fn compare_names_the_field_that_differs() {
    let entry = map(json!({"name": "a", "description": "b", "n": 1}));
    assert!(compare(
        &entry,
        &map(json!({"description": "b", "n": 1.0, "name": "a"}))
    )
    .is_ok());
    let e = compare(
        &entry,
        &map(json!({"name": "a", "description": "x", "n": 1})),
    )
    .unwrap_err();
    assert!(e.contains("`description` differs"), "{e}");
    let e = compare(&entry, &map(json!({"name": "a", "description": "b"}))).unwrap_err();
    assert!(e.contains("`n` is in the entry"), "{e}");
    let e = compare(
        &entry,
        &map(json!({"name": "a", "description": "b", "n": 1, "x": 2})),
    )
    .unwrap_err();
    assert!(e.contains("`x` is in the file"), "{e}");
}
