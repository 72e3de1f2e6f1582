//! The peers' figures `ggpnet bench` compares with, read from the file of
//! `anchors/` measured on the CPU it runs on: Sironi's propnet, ggplib and
//! the Regular Boardgames compiler, side by side on one machine by the
//! protocol each file describes.
//!
//! Two formats: the markdown tables of `peers.md` (AMD EPYC, Zen 5) and
//! `peers-xeon.md` (Intel Xeon), which give Sironi and ggplib; and the JSON
//! of `peers-epyc.json` (AMD EPYC, Zen 4), which adds the RBG compiler's flat
//! Monte-Carlo and its bulk-counting perft. An RBG figure is taken only for
//! a game whose RBG file follows the same rules as the GDL one, which the
//! file records as equal perft counts (`agree: true`); a rate measured on
//! another CPU is never scaled into an estimate for this one.

use ggpnet_tools::report::{Anchors, RbgPerft};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// A file of peer figures in `anchors/`, and the CPU they were measured on.
pub(crate) struct PeerFile {
    /// Its name in `anchors/`.
    pub(crate) file: &'static str,
    /// `model name` and `cpu family` of `/proc/cpuinfo` on that CPU.
    model_name: &'static str,
    family: u32,
    /// The CPU as the file describes it.
    pub(crate) machine: &'static str,
}

/// The peer files, in order of preference when none was measured on this CPU
/// (the first is then used, and every ratio to a peer crosses machines).
const PEER_FILES: [PeerFile; 3] = [
    PeerFile {
        file: "peers-epyc.json",
        model_name: "AMD EPYC",
        family: 25,
        machine: "AMD EPYC, Zen 4, 2 vCPUs",
    },
    PeerFile {
        file: "peers.md",
        model_name: "AMD EPYC",
        family: 26,
        machine: "AMD EPYC, Zen 5, 2 vCPUs",
    },
    PeerFile {
        file: "peers-xeon.md",
        model_name: "Intel(R) Xeon(R) Processor",
        family: 6,
        machine: "Intel Xeon, Emerald Rapids, 2 vCPUs",
    },
];

/// The peer file measured on the CPU of `model_name` and `family`, and whether
/// it was; the first file when none was.
pub(crate) fn peer_file(model_name: &str, family: Option<u32>) -> (&'static PeerFile, bool) {
    PEER_FILES
        .iter()
        .find(|p| p.model_name == model_name && Some(p.family) == family)
        .map_or((&PEER_FILES[0], false), |p| (p, true))
}

/// Per game (by its name in the corpus), the peers' figures of `file` in
/// `anchors`; empty when the file is missing or unreadable.
pub(crate) fn read(anchors: &Path, file: &PeerFile) -> BTreeMap<String, Anchors> {
    let text = super::read_input(&anchors.join(file.file)).unwrap_or_default();
    if file.file.ends_with(".json") {
        serde_json::from_str::<PeersJson>(&text).map_or_else(|_| BTreeMap::new(), PeersJson::anchors)
    } else {
        markdown_anchors(&text)
    }
}

/// The parts of a JSON peer file that `bench` reads.
#[derive(Deserialize)]
struct PeersJson {
    flat_mc: BTreeMap<String, PeerMc>,
    #[serde(default)]
    perft: BTreeMap<String, PeerPerft>,
}

/// A game's flat Monte-Carlo figures, transitions per second.
#[derive(Deserialize)]
struct PeerMc {
    sironi: Option<f64>,
    ggplib: Option<f64>,
    /// The RBG compiler's rate counted in GDL steps.
    rbg_as_gdl_steps: Option<f64>,
    /// The RBG file it ran.
    rbgfile: Option<String>,
}

/// A game's perft runs of the RBG compiler, by RBG file.
#[derive(Deserialize)]
struct PeerPerft {
    #[serde(default)]
    rbg: BTreeMap<String, RbgPerftRuns>,
}

/// The RBG compiler's perft of one file: the bulk-counting one, if run.
#[derive(Deserialize)]
struct RbgPerftRuns {
    bulk: Option<RbgPerftRun>,
}

/// One perft run of the RBG compiler.
#[derive(Deserialize)]
struct RbgPerftRun {
    depth: usize,
    ms: f64,
    /// `true` when its counts equal ggpnet's at every depth (else `false`
    /// or a remark such as "leaves only").
    agree: serde_json::Value,
}

impl PeersJson {
    /// Per game, its figures; the RBG compiler's only where its perft
    /// agreed with the GDL game's (the same rules).
    fn anchors(self) -> BTreeMap<String, Anchors> {
        let PeersJson { flat_mc, perft } = self;
        flat_mc
            .into_iter()
            .map(|(game, mc)| {
                let bulk = mc
                    .rbgfile
                    .as_ref()
                    .and_then(|file| perft.get(&game)?.rbg.get(file)?.bulk.as_ref())
                    .filter(|run| run.agree == serde_json::Value::Bool(true));
                let anchors = Anchors {
                    sironi: mc.sironi,
                    ggplib: mc.ggplib,
                    rbg_compiler: bulk.and(mc.rbg_as_gdl_steps),
                    rbg_perft: bulk.map(|run| RbgPerft {
                        depth: run.depth,
                        seconds: run.ms / 1000.0,
                    }),
                };
                (game, anchors)
            })
            .collect()
    }
}

/// Per game, the `Sironi` and `ggplib` columns of every markdown table row
/// of `text` (the first figure of a game and column wins).
fn markdown_anchors(text: &str) -> BTreeMap<String, Anchors> {
    let mut rows: BTreeMap<String, Anchors> = BTreeMap::new();
    let mut header: Vec<String> = Vec::new();
    for line in text.lines().map(str::trim) {
        if !line.starts_with('|') {
            header.clear();
            continue;
        }
        let cells: Vec<String> = line
            .trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_owned())
            .collect();
        if header.is_empty() {
            header = cells;
            continue;
        }
        if cells[0].starts_with("---") {
            continue;
        }
        let row = rows.entry(cells[0].clone()).or_default();
        for (column, cell) in header.iter().zip(&cells).skip(1) {
            let Ok(v) = cell.replace(',', "").parse::<f64>() else {
                continue;
            };
            match column.as_str() {
                "Sironi" => row.sironi = row.sironi.or(Some(v)),
                "ggplib" => row.ggplib = row.ggplib.or(Some(v)),
                _ => {}
            }
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_peers_measured_on_this_cpu_are_chosen() {
        let (file, same) = peer_file("Intel(R) Xeon(R) Processor", Some(6));
        assert_eq!((file.file, same), ("peers-xeon.md", true));
        let (file, same) = peer_file("AMD EPYC", Some(26));
        assert_eq!((file.file, same), ("peers.md", true));
        let (file, same) = peer_file("AMD EPYC", Some(25));
        assert_eq!((file.file, same), ("peers-epyc.json", true));
        // Another generation of the same name, or another CPU: the default file, across machines.
        for (name, family) in [("AMD EPYC", Some(23)), ("Apple M2", None), ("unknown", None)] {
            let (file, same) = peer_file(name, family);
            assert_eq!((file.file, same), ("peers-epyc.json", false), "{name}");
        }
    }

    #[test]
    fn rbg_figures_are_taken_only_where_the_rules_agree() {
        let json = r#"{
            "flat_mc": {
                "same": {"sironi": 1.0, "ggplib": 2.0, "rbg_as_gdl_steps": 30.0, "rbgfile": "a.rbg"},
                "other": {"sironi": 1.0, "ggplib": null, "rbg_as_gdl_steps": 40.0, "rbgfile": "b.rbg"},
                "split": {"sironi": null, "ggplib": null, "rbg_as_gdl_steps": 50.0, "rbgfile": "c.rbg"}
            },
            "perft": {
                "same": {"rbg": {"a.rbg": {"bulk": {"depth": 4, "ms": 1500.0, "agree": true}}}},
                "other": {"rbg": {"b.rbg": {"bulk": {"depth": 6, "ms": 10.0, "agree": false}}}},
                "split": {"rbg": {"c.rbg": {"bulk": {"depth": 2, "ms": 10.0, "agree": "leaves only"}}}}
            }
        }"#;
        let anchors = serde_json::from_str::<PeersJson>(json).unwrap().anchors();
        let same = &anchors["same"];
        assert_eq!(
            (same.sironi, same.ggplib, same.rbg_compiler),
            (Some(1.0), Some(2.0), Some(30.0))
        );
        let perft = same.rbg_perft.as_ref().expect("a bulk perft");
        assert_eq!((perft.depth, perft.seconds), (4, 1.5));
        for game in ["other", "split"] {
            assert_eq!(anchors[game].rbg_compiler, None, "{game}");
            assert!(anchors[game].rbg_perft.is_none(), "{game}");
        }
    }

    #[test]
    fn the_zen_4_file_gives_the_rbg_compiler_on_the_games_with_the_same_rules() {
        let Some(corpus) = ggpnet_tools::corpus::for_test("skipping the peer file test") else {
            return;
        };
        let anchors = read(&corpus.join("anchors"), peer_file("AMD EPYC", Some(25)).0);
        // Other rules (speedChess against chess with king capture), or
        // another move granularity (the split amazons): no RBG figure.
        let other_rules = ["speedChess", "amazons_10x10"];
        for game in crate::bench::ANCHOR_GAMES
            .into_iter()
            .filter(|g| !other_rules.contains(g))
        {
            let a = &anchors[game];
            assert!(a.rbg_compiler.is_some_and(|r| r > 0.0), "{game}: {a:?}");
            assert!(
                a.rbg_perft
                    .as_ref()
                    .is_some_and(|p| p.depth > 0 && p.seconds > 0.0),
                "{game}"
            );
        }
        for game in other_rules {
            assert_eq!(anchors[game].rbg_compiler, None, "{game}");
            assert!(anchors[game].ggplib.is_some(), "{game}");
        }
    }

    #[test]
    fn markdown_tables_give_sironi_and_ggplib() {
        let text = "| game | Sironi | ggplib | other |\n| --- | ---: | ---: | ---: |\n\
                    | ticTacToe | 1,107,757 | 3,737,135 | 9 |\n| hex | 39,890 | n/a | 1 |\n";
        let anchors = markdown_anchors(text);
        assert_eq!(anchors["ticTacToe"].sironi, Some(1_107_757.0));
        assert_eq!(anchors["ticTacToe"].ggplib, Some(3_737_135.0));
        assert_eq!((anchors["hex"].ggplib, anchors["hex"].rbg_compiler), (None, None));
    }
}
