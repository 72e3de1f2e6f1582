use std::time::Instant;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let text = std::fs::read_to_string(&args[1]).unwrap();
    let n: usize = args[2].parse().unwrap();
    let game = ggpnet_rbg::Game::parse(&text).unwrap();
    let s = game.initial_state();
    let mut rng = ggpnet_rbg::Rng::new(1);
    let t = Instant::now();
    let (mut len, mut len2) = (0f64, 0f64);
    let mut sc = vec![0f64; game.players().len()];
    let mut states = 0usize;
    for _ in 0..n {
        let p = game.random_playout(&s, &mut rng);
        states += p.moves;
        len += p.moves as f64;
        len2 += (p.moves as f64).powi(2);
        for (a, b) in sc.iter_mut().zip(&p.scores) {
            *a += *b as f64;
        }
    }
    let m = len / n as f64;
    println!(
        "{} mean_length {:.3} sd {:.3} scores {:?} time {:.2}s states/s {:.0}",
        args[1],
        m,
        (len2 / n as f64 - m * m).sqrt(),
        sc.iter().map(|x| x / n as f64).collect::<Vec<_>>(),
        t.elapsed().as_secs_f64(),
        states as f64 / t.elapsed().as_secs_f64()
    );
}
