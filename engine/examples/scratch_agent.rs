use fs_search_engine::{BashExecutor, LocalBashConfig, LocalBashExecutor, bash::{BashRequest, SandboxBashExecutor, SandboxConfig}};
use std::sync::Arc;
#[tokio::main]
async fn main() {
    let cmd = std::env::args().nth(1).unwrap_or("true".into());
    let config = LocalBashConfig { cwd: Some("/tmp/ws".into()), ..LocalBashConfig::default() };
    let kinds: Vec<(&str, Arc<dyn BashExecutor>)> = vec![
        ("local", Arc::new(LocalBashExecutor::new(config.clone()).unwrap())),
        ("sandbox", Arc::new(SandboxBashExecutor::new(config.clone(), SandboxConfig::default()).unwrap())),
    ];
    for round in 0..2 {
    for (name, ex) in &kinds {
        let t = std::time::Instant::now();
        let mut out = String::new();
        for _ in 0..100 {
            let spec = ex.resolve(BashRequest { command: cmd.clone(), ..Default::default() }).unwrap();
            let r = ex.run(spec).await.unwrap();
            out = format!("{:?} {:?} {:?}", r.exit_code, r.stdout.text, r.stderr.text);
        }
        println!("{round} {name}: {:.2} ms/call {out}", t.elapsed().as_secs_f64() * 10.0);
    }}
}
