//! The languages beyond the first seven, through a real daemon: what a project in Java, Ruby
//! and C++ shows to `symbols`, `tests-for`, `search` and `status`.

use booger_tests::{Env, write};
use serde_json::json;

#[test]
fn java_ruby_and_cpp_are_read_structurally() {
    let env = Env::new();
    let _d = env.start_daemon();
    let root = env.project("polyglot");
    write(
        &root,
        "src/main/java/org/acme/Parser.java",
        "package org.acme;\n\nimport java.util.List;\n\n/** Parses documents. */\npublic class Parser {\n    public Document parseDocument(String html) {\n        return new Document(html);\n    }\n}\n",
    );
    write(
        &root,
        "src/test/java/org/acme/ParserTest.java",
        "package org.acme;\n\nclass ParserTest {\n    @Test\n    void readsAnEmptyDocument() {\n        new Parser().parseDocument(\"\");\n    }\n}\n",
    );
    write(
        &root,
        "lib/acme/client.rb",
        "require 'net/http'\n\nmodule Acme\n  class Client\n    def fetch_page(path)\n      Net::HTTP.get(path)\n    end\n  end\nend\n",
    );
    write(
        &root,
        "spec/client_spec.rb",
        "describe Acme::Client do\n  it 'fetches a page' do\n    Acme::Client.new.fetch_page('/')\n  end\nend\n",
    );
    // A `.h` header that reads as C++, and a Rakefile, which has no extension.
    write(
        &root,
        "include/app.h",
        "#pragma once\nnamespace acme {\nclass App {\n  public:\n    int run_all(int argc);\n};\n}\n",
    );
    write(&root, "Rakefile", "task :default do\n  sh 'rspec'\nend\n\ndef helper_task\n  1\nend\n");
    let out = env.run(&["index", root.to_str().unwrap()]);
    assert!(out.status.success(), "{}", booger_tests::describe(&out));

    let (text, _, _) = env.call(&root, "s", "symbols", json!({ "path": "src/main/java/org/acme/Parser.java" }));
    assert!(text.contains("[import] import java.util.List;"), "{text}");
    assert!(text.contains("5-6 [class] public class Parser"), "{text}");
    assert!(text.contains("7-9 [method] public Document parseDocument(String html)"), "{text}");
    let (text, _, _) = env.call(&root, "s", "symbols", json!({ "path": "lib/acme/client.rb" }));
    assert!(text.contains("[mod] module Acme") && text.contains("[method] def fetch_page(path)"), "{text}");
    let (text, data, _) = env.call(&root, "s", "symbols", json!({ "path": "include/app.h" }));
    assert!(text.contains("[class] class App") && text.contains("[declaration] int run_all(int argc);"), "{text}");
    assert_eq!(data["results"][1]["parent"], "acme", "{data}");

    // Tests by annotation and by runner call, each found for the method it exercises.
    let (text, _, _) = env.call(&root, "s", "tests-for", json!({ "symbol": "parseDocument" }));
    assert!(text.contains("ParserTest.java") && text.contains("[test] @Test void readsAnEmptyDocument()"), "{text}");
    let (text, _, _) = env.call(&root, "s", "tests-for", json!({ "symbol": "fetch_page" }));
    assert!(text.contains("spec/client_spec.rb") && text.contains("[test] it 'fetches a page'"), "{text}");

    // A search in words finds the method by its split name, as a method.
    let (text, data, _) =
        env.call(&root, "s", "search", json!({ "query": "parse document", "output_mode": "signatures" }));
    assert_eq!(data["results"][0]["name"], "parseDocument", "{text}");
    assert_eq!(data["results"][0]["kind"], "method", "{text}");

    let status = env.json(&["status", root.to_str().unwrap()]);
    let languages = &status["project"]["index"]["languages"];
    for lang in ["java", "ruby", "cpp"] {
        assert!(languages.get(lang).is_some(), "{lang} missing: {languages}");
    }
    let (text, _, _) = env.call(&root, "s", "symbols", json!({ "path": "Rakefile" }));
    assert!(text.contains("[function] def helper_task"), "{text}");
}
