//! Questions on a real daemon: asked how or where something is done, the answer is the
//! function doing it, before the functions that only share the question's words.

use booger_tests::{Env, write};
use serde_json::{Value, json};

use super::search::{search, warm};

/// Where C code declares a function in a header and wraps the function doing the work: asked
/// for the name, the definition comes before its prototype; asked a question, the function
/// the thin wrapper hands its arguments to comes before the wrapper, and the suite in
/// `test.c` (a file of tests by its name) after both.
#[test]
fn a_question_is_answered_by_the_function_doing_the_work() {
    let env = Env::new();
    let _d = env.start_daemon();
    let root = env.project("wrappers");
    write(
        &root,
        "net.h",
        "/* Opens a TCP connection to host and port, waiting at most timeout_ms. */\nint connect_tcp(const char *host, int port, int timeout_ms);\n\n/* Closes fd. */\nint close_fd(int fd);\n",
    );
    write(
        &root,
        "net.c",
        "#include \"net.h\"\n\nstatic int _connect_tcp(const char *host, int port, int timeout_ms, int flags) {\n    int fd = -1;\n    int tries = 0;\n    while (tries < 3) {\n        fd = socket_for(host, port);\n        if (fd >= 0) {\n            if (wait_writable(fd, timeout_ms) == 0) {\n                return fd;\n            }\n            close_fd(fd);\n        }\n        tries++;\n    }\n    return flags ? -1 : fd;\n}\n\n/* Opens a TCP connection with a timeout. */\nint connect_tcp(const char *host, int port, int timeout_ms) {\n    return _connect_tcp(host, port, timeout_ms, 0);\n}\n\nint close_fd(int fd) {\n    int rc;\n    do {\n        rc = close(fd);\n    } while (rc < 0 && errno == EINTR);\n    if (rc < 0) {\n        log_error(\"close\", errno);\n        return -1;\n    }\n    closed_count++;\n    return 0;\n}\n",
    );
    write(
        &root,
        "test.c",
        "#include \"net.h\"\n\n/* The client opens a TCP connection and its timeout ends the wait. */\nstatic void test_connect_tcp_timeout(void) {\n    int fd = connect_tcp(\"10.255.255.1\", 80, 10);\n    expect(fd < 0, \"the connection waits for its timeout\");\n}\n",
    );
    let out = env.run(&["index", root.to_str().unwrap()]);
    assert!(out.status.success(), "{}", booger_tests::describe(&out));
    warm(&env, &root);
    let places = |data: &Value| -> Vec<(String, String)> {
        data["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["path"].as_str().unwrap().to_owned(), r["name"].as_str().unwrap_or("").to_owned()))
            .collect()
    };

    let (text, data, err) = search(&env, &root, json!({ "query": "close_fd" }));
    assert!(!err, "{text}");
    let found = places(&data);
    let at = |path: &str, name: &str| found.iter().position(|(p, n)| p == path && n == name);
    assert!(at("net.c", "close_fd").unwrap() < at("net.h", "close_fd").unwrap(), "{found:?}");

    let question = "how does the client open a TCP connection and wait for it with a timeout?";
    let (text, data, err) = search(&env, &root, json!({ "query": question }));
    assert!(!err, "{text}");
    let found = places(&data);
    let at = |path: &str, name: &str| found.iter().position(|(p, n)| p == path && n == name);
    let (work, wrapper) = (at("net.c", "_connect_tcp").unwrap(), at("net.c", "connect_tcp").unwrap());
    assert!(work < wrapper, "{found:?}");
    assert!(found.iter().take(2).all(|(p, _)| p != "test.c"), "{found:?}");
}

/// Asked where a thing is done, the function that one of the best answers hands the work to
/// (in its file) comes right after it, before functions that only share the question's words.
#[test]
fn a_question_brings_the_function_its_best_answer_calls() {
    let env = Env::new();
    let _d = env.start_daemon();
    let root = env.project("callees");
    write(&root, "upload.py", UPLOAD_PY);
    write(&root, "progress.py", PROGRESS_PY);
    // Other code, so that the question's words are rare enough to count.
    let filler: String = ["parse", "render", "cache", "route", "token", "queue", "merge", "socket", "retry", "theme"]
        .iter()
        .map(|w| {
            format!("def {w}_step(value):\n    \"\"\"Handle the {w} step for value.\"\"\"\n    return value\n\n\n")
        })
        .collect();
    write(&root, "steps.py", &filler);
    let out = env.run(&["index", root.to_str().unwrap()]);
    assert!(out.status.success(), "{}", booger_tests::describe(&out));
    warm(&env, &root);
    let (text, data, err) = search(&env, &root, json!({ "query": "where is the length of an upload body computed?" }));
    assert!(!err, "{text}");
    let found: Vec<(&str, &str)> = data["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["path"].as_str().unwrap(), r["name"].as_str().unwrap_or("")))
        .collect();
    assert_eq!(found[0], ("upload.py", "prepare_body"), "{found:?}");
    let measure = found.iter().position(|f| *f == ("upload.py", "measure")).expect("measure is found");
    let first_other = found.iter().position(|(p, _)| *p == "progress.py").expect("progress.py is found");
    assert!(measure < first_other, "the callee before functions sharing the words: {found:?}");
}

const UPLOAD_PY: &str = r#"class Upload:
    def prepare_body(self, data, files):
        """Prepare the body of an upload: encode the files and data, then compute its length."""
        if not data and not files:
            self.body = None
            return
        body = encode(data, files)
        self.body = body
        if self.chunked:
            self.headers["Transfer-Encoding"] = "chunked"
        else:
            self.headers["Content-Length"] = str(measure(body))


def measure(body):
    stream = body
    if stream is None:
        return 0
    if hasattr(stream, "seek"):
        stream.seek(0, 2)
        total = stream.tell()
        stream.seek(0)
        return total
    if hasattr(stream, "__len__"):
        return len(stream)
    return sum(len(part) for part in stream)


def encode(data, files):
    parts = [str(data)]
    for name in files:
        parts.append(name)
    return "&".join(parts)
"#;

const PROGRESS_PY: &str = r#"def report_upload(body, sent):
    """Report how much of an upload body was sent, and the length left."""
    left = len(body) - sent
    print(f"{sent} of the upload body sent, {left} left")


def check_upload(body, limit):
    """Refuse an upload whose body length passes the limit."""
    if len(body) > limit:
        raise ValueError("upload body too long")


def log_upload(body):
    """Log an upload body's length."""
    print("upload body of length", len(body))


def max_length(body):
    """The longest body length an upload may have."""
    return 10 * 1024 * 1024


def upload_done(body):
    """Say that the upload of a body of some length is done."""
    print("upload body done")
"#;
