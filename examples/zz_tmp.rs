fn main() {
    for name in ["tictactoe", "chessclock", "cheshire", "respawn", "xwing", "rts"] {
        let text = std::fs::read_to_string(format!("games/rtgdl/{name}.kif")).unwrap();
        let d = ggpnet::kif::parse(&text).unwrap();
        match ggpnet::kif::rtgdl::circuit_form(&d) {
            Err(e) => println!("{name}: {e}"),
            Ok(form) => {
                let kif: String = form
                    .description
                    .rules
                    .iter()
                    .map(|r| ggpnet::kif::rule_to_string(r, &form.description.symbols) + "\n")
                    .collect();
                if name == "cheshire" {
                    print!("{kif}");
                }
                let cfg = ggpnet::propnet::LoadConfig {
                    optimize: ggpnet::propnet::OptimizeConfig::exact(),
                    ..Default::default()
                };
                match ggpnet::propnet::compile(&kif, &cfg) {
                    Ok(l) => println!("{name}: {:?} bases {:?}", l.report.components, l.game.facts()),
                    Err(e) => println!("{name}: {e}"),
                }
            }
        }
    }
}
