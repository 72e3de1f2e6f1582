//! Grounding a sum tree: the independent branches of a rule body (grounder
//! `branch`) each become a relation of their own, so the partial sums of one
//! branch are not multiplied with the other's. The game below (six counters,
//! a goal that adds them as `(a+b+c) + (d+e+f)` through a three-term `add3`)
//! needs 3,296 ground rules without the branches (main at 876d1d9) and 1,021
//! with them: it grounds under a limit of 2,000, and plays as the reference
//! interpreter does.

use ggpnet::propnet::{load, LoadConfig};

/// Six counters raised one a turn for ten turns; the goal is their sum.
const SUM_TREE: &str = "
    (role player)
    (kind a) (kind b) (kind c) (kind d) (kind e) (kind f)
    (number 0) (number 1) (number 2) (number 3) (number 4) (number 5) (number 6) (number 7) (number 8) (number 9) (number 10) (number 11) (number 12)
    (succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5) (succ 5 6) (succ 6 7) (succ 7 8) (succ 8 9) (succ 9 10) (succ 10 11) (succ 11 12)
    (<= (add 0 ?x ?x) (number ?x))
    (<= (add ?x ?y ?s) (succ ?x0 ?x) (succ ?y ?y1) (add ?x0 ?y1 ?s))
    (<= (add3 ?x ?y ?z ?s) (add ?x ?y ?p) (add ?p ?z ?s))
    (<= (init (count ?k 0)) (kind ?k))
    (init (step 0))
    (<= (legal player (inc ?k)) (kind ?k))
    (<= (next (count ?k ?m)) (does player (inc ?k)) (true (count ?k ?n)) (succ ?n ?m))
    (<= (next (count ?k ?n)) (true (count ?k ?n)) (does player (inc ?j)) (distinct ?j ?k))
    (<= (next (step ?m)) (true (step ?n)) (succ ?n ?m))
    (<= terminal (true (step 10)))
    (<= (score ?s)
        (true (count a ?a)) (true (count b ?b)) (true (count c ?c)) (add3 ?a ?b ?c ?x)
        (true (count d ?d)) (true (count e ?e)) (true (count f ?f)) (add3 ?d ?e ?f ?y)
        (add ?x ?y ?s))
    (<= (goal player ?s) (score ?s))";

#[test]
fn a_sum_tree_grounds_branch_by_branch() {
    let config = LoadConfig::new().ground(ggpnet::grounder::Config::new().max_ground_rules(2_000));
    let loaded = load(SUM_TREE, &config).expect("the branches keep grounding under 2,000 rules");
    let description = ggpnet::kif::parse(SUM_TREE).expect("the game parses");
    let reference = ggpnet_reference::Reference::new(&description).expect("the reference loads it");
    let report = ggpnet_tools::differential::differential(&loaded, &reference, 20, 12, 1);
    assert_eq!(report.first_difference, None);
}
