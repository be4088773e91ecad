//! `booger mcp`: a byte pump between an agent's stdio and the daemon.
//!
//! After the hello, frames pass through untouched in both directions; the MCP protocol lives
//! in the daemon. When stdin closes, the write half is shut so the daemon finishes in-flight
//! requests, answers them, and closes; then the pump exits.

use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::connect::{Daemon, Failure, Hello};

pub fn run(socket: &Path, project: &Path, session: &str) -> Result<(), Failure> {
    let mut daemon = Daemon::connect_or_start(socket)?;
    daemon.hello(&Hello { client: "booger-mcp", project: Some(project), session })?;
    let Daemon { stream, reader, .. } = daemon;

    let mut up = stream.try_clone()?;
    let stdin_closed = Arc::new(AtomicBool::new(false));
    let closed = Arc::clone(&stdin_closed);
    let pump_up = std::thread::spawn(move || {
        let copied = io::copy(&mut io::stdin().lock(), &mut up);
        closed.store(true, Ordering::SeqCst);
        let _ = up.shutdown(Shutdown::Write);
        copied
    });

    let mut stdout = io::stdout().lock();
    // Bytes the hello's reader already pulled in belong to the agent.
    let pending = reader.buffer().to_vec();
    stdout.write_all(&pending)?;
    stdout.flush()?;
    let mut down = reader.into_inner();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match down.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        };
        // Frames are whole lines; flush every chunk so no reply waits in a buffer.
        if stdout.write_all(&buf[..n]).and_then(|()| stdout.flush()).is_err() {
            break; // the agent went away
        }
    }
    if !stdin_closed.load(Ordering::SeqCst) {
        // The daemon closed first (it stopped): stdin may stay open forever; do not wait for it.
        eprintln!("booger mcp: boogerd closed the connection");
        std::process::exit(1);
    }
    let _ = pump_up.join();
    Ok(())
}
