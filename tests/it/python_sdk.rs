//! The official MCP Python SDK talks to `booger mcp` over stdio. The harness installs the
//! pinned SDK with pip into `target/py-mcp` on first use.

use std::path::Path;

use booger_tests::{Env, bin, describe};

#[test]
fn official_python_sdk_initializes_lists_and_calls() {
    let env = Env::new();
    let proj = env.project("zeta");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("python/mcp_sdk_client.py");
    // No daemon yet: `booger mcp` starts one under the SDK.
    // The env's variables reach booger through python.
    let mut py = booger_tests::python_with_mcp(&env);
    py.arg(&script).arg(bin("booger")).arg(&proj);
    let out = booger_tests::output_within(py, std::time::Duration::from_secs(60));
    assert!(out.status.success(), "{}", describe(&out));
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", describe(&out)));
    assert_eq!(v["server"], "booger");
    assert!(v["protocolVersion"].as_str().unwrap().starts_with("20"), "{v}");
    assert!(v["tools"].as_array().unwrap().iter().any(|t| t == "status"), "{v}");
    assert_eq!(v["statusIsError"], false, "{v}");
    assert!(v["status"].as_str().unwrap().contains("boogerd"), "{v}");
    assert_eq!(v["badIsError"], true, "{v}");
    assert!(v["badText"].as_str().unwrap().contains("must be a string"), "{v}");
}
