use std::time::Instant;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = &args[1];
    let maxd: usize = args.get(2).map(|s| s.parse().unwrap()).unwrap_or(3);
    let text = std::fs::read_to_string(path).unwrap();
    let t = Instant::now();
    let game = match ggpnet_rbg::Game::parse(&text) {
        Ok(g) => g,
        Err(e) => {
            println!("{path}: ERROR {e} {:?}", e.kind());
            return;
        }
    };
    let s = game.initial_state();
    print!("{path}: parsed {:.3}s;", t.elapsed().as_secs_f64());
    for d in 1..=maxd {
        let t = Instant::now();
        let n = game.perft(&s, d);
        print!(" {d}:{n} ({:.2}s)", t.elapsed().as_secs_f64());
        use std::io::Write;
        std::io::stdout().flush().unwrap();
    }
    println!();
}
