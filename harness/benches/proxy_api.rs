//! Times the fault-proxy verbs through [`FaultProxies`] against the embedded Toxiproxy server:
//! how long after the nemesis decides on a fault the fault is in place. Run with
//! `cargo bench -p lockpick-harness --bench proxy_api` (add `-- --toxiproxy HOST:PORT` to time
//! a real Toxiproxy instead).

use lockpick_harness::proxy::{EmbeddedToxiproxy, FaultProxies};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

const ROUNDS: usize = 50;

fn summary(name: &str, mut v: Vec<Duration>) {
    v.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{name:<10} n={:<3} min {:>7.2} ms  median {:>7.2} ms  p90 {:>7.2} ms  max {:>7.2} ms",
        v.len(),
        ms(v[0]),
        ms(v[v.len() / 2]),
        ms(v[v.len() * 9 / 10]),
        ms(v[v.len() - 1]),
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let external: Option<SocketAddr> = args.iter().position(|a| a == "--toxiproxy").map(|i| {
        use std::net::ToSocketAddrs;
        args[i + 1]
            .to_socket_addrs()
            .ok()
            .and_then(|mut addrs| addrs.find(SocketAddr::is_ipv4))
            .expect("--toxiproxy HOST:PORT")
    });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async move {
        let embedded = match external {
            Some(_) => None,
            None => Some(
                EmbeddedToxiproxy::start(SocketAddr::from(([127, 0, 0, 1], 0)))
                    .await
                    .expect("start embedded toxiproxy"),
            ),
        };
        let api = external.unwrap_or_else(|| embedded.as_ref().expect("embedded").api_addr());
        let proxies = FaultProxies::new(api).expect("client thread");
        let upstream = SocketAddr::from(([127, 0, 0, 1], 9));
        let (mut create, mut partition, mut slow, mut heal, mut delete) =
            (vec![], vec![], vec![], vec![], vec![]);
        for i in 0..ROUNDS {
            let name = format!("bench-{i}");
            let t = Instant::now();
            proxies.create(&name, upstream).await.expect("create");
            create.push(t.elapsed());
            let t = Instant::now();
            proxies.partition(&name).await.expect("partition");
            partition.push(t.elapsed());
            let t = Instant::now();
            proxies.heal(&name).await.expect("heal");
            heal.push(t.elapsed());
            let t = Instant::now();
            proxies.slow(&name, 100, 10).await.expect("slow");
            slow.push(t.elapsed());
            proxies.heal(&name).await.expect("heal");
            let t = Instant::now();
            proxies.delete(&name).await.expect("delete");
            delete.push(t.elapsed());
        }
        println!("fault proxy API through FaultProxies ({ROUNDS} rounds, api {api})");
        summary("create", create);
        summary("partition", partition);
        summary("slow", slow);
        summary("heal", heal);
        summary("delete", delete);
        if let Some(server) = embedded {
            server.shutdown().await;
        }
    });
}
