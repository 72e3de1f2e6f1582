fn main() {
    for path in std::env::args().skip(1) {
        let src = std::fs::read_to_string(&path).unwrap();
        let t = std::time::Instant::now();
        let d = match ggpnet_kif::parse(&src) {
            Ok(d) => d,
            Err(e) => {
                println!("{path}: PARSE {e}");
                continue;
            }
        };
        match ggpnet_grounder::ground(&d, &Default::default()) {
            Ok(p) => println!(
                "{path}: ok atoms={} rules={} {:.2}s",
                p.atoms.len(),
                p.rules.len(),
                t.elapsed().as_secs_f64()
            ),
            Err(e) => println!("{path}: ERR {e}"),
        }
    }
}
