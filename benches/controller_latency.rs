//! How fast the browser controller's push stream delivers an engine event to a page: the
//! time from an event appended to a session's events.jsonl (through the engine's `EventLog`)
//! to its `event` frame arriving at an SSE client of `session web` on loopback. Goal: under
//! 50 ms. `cargo bench --bench controller_latency`; `BENCH_SAMPLES` (default 100).

use aigenora::layout::SessionDir;
use std::time::{Duration, Instant};

use aigenora::control::web::{Scope, bind, session_token};
use aigenora::records::{Event, EventLog};
use serde_json::json;

fn main() {
    let samples: usize = std::env::var("BENCH_SAMPLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let work = tempfile::tempdir().unwrap();
    let session = SessionDir::open(work.path().join("sessions").join("host-1"));
    std::fs::create_dir_all(session.root()).unwrap();
    std::fs::write(
        session.session_file(),
        json!({"role": "host", "status": "running", "local_control_mode": "human"}).to_string(),
    )
    .unwrap();
    let log = EventLog::to_file(session.events_file());
    log.emit(Event::PeerResumed {});
    let token = session_token(&session).unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut latencies = runtime.block_on(async {
        let (controller, serving) = bind(Scope::One(session.clone()), 0).await.unwrap();
        tokio::spawn(serving);
        let url = format!(
            "http://{}/api/sessions/host-1/stream?token={token}",
            controller.addr
        );
        let mut stream = reqwest::get(&url).await.unwrap();
        let mut seen = String::new();
        while !seen.contains("peer_resumed") {
            seen.push_str(&String::from_utf8_lossy(
                &stream.chunk().await.unwrap().unwrap(),
            ));
        }
        let mut latencies = Vec::with_capacity(samples);
        for sample in 0..samples {
            let marker = format!("probe-{sample}-");
            seen.clear();
            let sent = Instant::now();
            log.emit(Event::StartFailed {
                error: marker.clone(),
            });
            while !seen.contains(&marker) {
                let chunk = tokio::time::timeout(Duration::from_secs(5), stream.chunk())
                    .await
                    .expect("an event within 5 s")
                    .unwrap()
                    .unwrap();
                seen.push_str(&String::from_utf8_lossy(&chunk));
            }
            latencies.push(sent.elapsed());
            tokio::time::sleep(Duration::from_millis(7 + (sample as u64 * 3) % 11)).await;
        }
        latencies
    });
    latencies.sort();
    let at = |q: f64| latencies[((latencies.len() - 1) as f64 * q).round() as usize];
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "controller push latency over {samples} events: min {:.2} ms, median {:.2} ms, p95 {:.2} ms, max {:.2} ms (goal < 50 ms)",
        ms(latencies[0]),
        ms(at(0.5)),
        ms(at(0.95)),
        ms(at(1.0))
    );
}
