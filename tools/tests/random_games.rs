//! A property test over random valid games: for each of a few hundred games
//! made from a seed (one to three roles, propositional and parameterized bases,
//! derived relations with stratified negation, simultaneous moves, goals that
//! may be missing or several), every evaluator gives the same answers on the
//! same random playouts (states, legal moves, terminal and goals, and the lanes
//! evaluator's moves), and the propnet agrees with the reference interpreter,
//! with the optimizer's passes on and off.

use ggpnet::propnet::{load, LoadConfig, OptimizeConfig};
use ggpnet_reference::Reference;
use ggpnet_tools::differential::{differential, evaluators_agree};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::fmt::Write;

/// Games generated and checked.
const GAMES: u64 = 500;

/// A random game description, valid GDL by construction.
struct Generator {
    rng: Xoshiro256PlusPlus,
    roles: usize,
    props: usize,
    derived: usize,
    text: String,
}

impl Generator {
    fn new(seed: u64) -> Generator {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let (roles, props, derived) = (rng.gen_range(1..=3), rng.gen_range(1..=5), rng.gen_range(0..=3));
        Generator {
            rng,
            roles,
            props,
            derived,
            text: String::new(),
        }
    }

    /// A literal about the current state: `(true (p i))`, `(true (c n))` or their negation.
    fn state_literal(&mut self) -> String {
        let atom = if self.rng.gen_bool(0.7) {
            format!("(true (p {}))", self.rng.gen_range(0..self.props))
        } else {
            format!("(true (c {}))", self.rng.gen_range(1..=3))
        };
        if self.rng.gen_bool(0.3) {
            format!("(not {atom})")
        } else {
            atom
        }
    }

    /// A literal of a rule body: about the state, or a derived relation below `below`.
    fn body_literal(&mut self, below: usize) -> String {
        if below > 0 && self.rng.gen_bool(0.3) {
            let d = self.rng.gen_range(0..below);
            if self.rng.gen_bool(0.3) {
                format!("(not (d{d}))")
            } else {
                format!("(d{d})")
            }
        } else {
            self.state_literal()
        }
    }

    /// A conjunction of one to `most` literals after a positive one that binds
    /// nothing else, so that every rule is safe.
    fn body(&mut self, most: usize, below: usize) -> String {
        let mut body = format!("(true (step ?s{}))", self.rng.gen_range(0..1000));
        for _ in 0..self.rng.gen_range(1..=most) {
            write!(body, " {}", self.body_literal(below)).expect("a String");
        }
        body
    }

    fn rule(&mut self, head: &str, body: &str) {
        writeln!(self.text, "(<= {head} {body})").expect("a String");
    }

    fn game(mut self) -> String {
        let length = self.rng.gen_range(2..=8);
        for r in 0..self.roles {
            writeln!(self.text, "(role r{r})").expect("a String");
        }
        for n in 1..=3 {
            writeln!(self.text, "(num {n})").expect("a String");
        }
        for s in 0..length {
            writeln!(self.text, "(succ {s} {})", s + 1).expect("a String");
        }
        writeln!(self.text, "(init (step 0))").expect("a String");
        for i in 0..self.props {
            if self.rng.gen_bool(0.5) {
                writeln!(self.text, "(init (p {i}))").expect("a String");
            }
        }
        for d in 0..self.derived {
            for _ in 0..self.rng.gen_range(1..=2) {
                let body = self.body(2, d);
                self.rule(&format!("(d{d})"), &body);
            }
        }
        self.moves();
        self.next();
        self.rule("terminal", &format!("(true (step {length}))"));
        if self.rng.gen_bool(0.3) {
            let body = self.body(3, self.derived);
            self.rule("terminal", &body);
        }
        self.goals();
        self.text
    }

    /// Every role may always pass; some may also switch a proposition or set a cell.
    fn moves(&mut self) {
        for r in 0..self.roles {
            self.rule(&format!("(legal r{r} noop)"), "(true (step ?s))");
            for _ in 0..self.rng.gen_range(0..=2) {
                let i = self.rng.gen_range(0..self.props);
                let body = self.body(2, self.derived);
                self.rule(&format!("(legal r{r} (flip {i}))"), &body);
            }
            if self.rng.gen_bool(0.5) {
                self.rule(
                    &format!("(legal r{r} (set ?n))"),
                    "(num ?n) (not (true (c ?n))) (true (step ?s))",
                );
            }
        }
    }

    fn next(&mut self) {
        self.rule("(next (step ?m))", "(true (step ?n)) (succ ?n ?m)");
        self.rule("(next (c ?n))", "(does ?r (set ?n))");
        self.rule("(next (c ?n))", "(true (c ?n))");
        for i in 0..self.props {
            let r = self.rng.gen_range(0..self.roles);
            self.rule(
                &format!("(next (p {i}))"),
                &format!("(does r{r} (flip {i})) (not (true (p {i})))"),
            );
            self.rule(&format!("(flipped {i})"), &format!("(does ?r (flip {i}))"));
            self.rule(
                &format!("(next (p {i}))"),
                &format!("(true (p {i})) (not (flipped {i}))"),
            );
            if self.rng.gen_bool(0.3) {
                let body = self.body(2, self.derived);
                self.rule(&format!("(next (p {i}))"), &body);
            }
        }
    }

    fn goals(&mut self) {
        for r in 0..self.roles {
            let mut values = [0, 25, 50, 75, 100];
            values.shuffle(&mut self.rng);
            for &value in &values[..self.rng.gen_range(1..=3)] {
                let body = self.body(2, self.derived);
                self.rule(&format!("(goal r{r} {value})"), &body);
            }
        }
    }
}

#[test]
fn every_evaluator_and_the_reference_agree_on_random_games() {
    let (mut checked, mut steps) = (0, 0);
    for seed in 0..GAMES {
        let text = Generator::new(seed).game();
        let config = match seed % 2 {
            1 => LoadConfig::new().optimize(OptimizeConfig::none()),
            _ => LoadConfig::new(),
        };
        let loaded =
            load(&text, &config).unwrap_or_else(|e| panic!("game {seed} does not load: {e}\n{text}"));
        let evaluators = evaluators_agree(&loaded.game, 4, 12, seed);
        assert_eq!(evaluators.first_difference, None, "game {seed}:\n{text}");
        let description = ggpnet::kif::parse(&text).expect("the game parses");
        let reference = Reference::new(&description).unwrap_or_else(|e| panic!("game {seed}: {e}\n{text}"));
        let against = differential(&loaded, &reference, 4, 12, seed);
        assert_eq!(against.first_difference, None, "game {seed}:\n{text}");
        checked += 1;
        steps += evaluators.steps + against.steps;
    }
    println!("{checked} random games, {steps} states compared: every evaluator and the reference interpreter agree");
    println!("the first game:\n{}", Generator::new(0).game());
    assert_eq!(checked, GAMES);
}
