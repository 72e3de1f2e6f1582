//! Preparing a game for queries: from a parsed description to frozen static
//! relations and join plans for the dynamic ones.
//!
//! 1. Rules are normalized and compiled, and the program is analysed; an unsafe or
//!    unstratified description is rejected here.
//! 2. A trial evaluates the static components with a budget, to learn the sizes of
//!    static relations and which ones are too big to compute in full.
//! 3. Dynamic relations, and static ones too big for the trial, are made *lazy*
//!    (see [`crate::demand`]) where every caller binds some argument; the rewritten
//!    program is analysed again. Demand is shared by all callers of a relation, so a
//!    rewrite can put a negation inside a cycle the original program did not have;
//!    the lazy relations of that cycle then go back to being computed in full.
//! 4. The static components of the chosen program are evaluated once, and the
//!    dynamic ones are planned, with indexes registered on the frozen relations.

use crate::database::{Database, Db};
use crate::demand::transform;
use crate::error::ReferenceError;
use crate::eval::{evaluate, Budget, ComponentPlans};
use crate::normalize::normalize;
use crate::plan::Plan;
use crate::program::{CLit, PredId, Preds, Program, Rules, Unstratified};
use crate::relation::{IndexSpec, SpecEntry};
use crate::terms::{Node, TermId, TermStore, Terms};
use ggpnet_kif::{rule_to_string, term_to_string, Description, SymbolId, SymbolTable, Term};

/// A planning guess for the size of a relation nothing is known about yet.
const UNKNOWN_SIZE: f64 = 1000.0;

/// How much each bound key subterm is guessed to narrow a lookup.
const KEY_SELECTIVITY: f64 = 0.1;

/// Derivations the trial allows one static component before calling it too big.
const TRIAL_BUDGET: usize = 300_000;

/// Join steps (candidate facts tried) the trial allows one static component:
/// a component that tries this many bindings is too big to compute whole
/// however few it keeps.
const TRIAL_STEPS: usize = 30_000_000;

/// Derivations any static component may make; beyond it the game is refused
/// rather than exhausting memory.
const STATIC_LIMIT: usize = 50_000_000;

/// Join steps any static component may take; beyond it the game is refused
/// rather than computing for minutes (a join that keeps nothing).
const STATIC_STEPS: usize = 2 * STATIC_LIMIT;

/// The relations the state machine reads and writes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Outputs {
    pub(crate) truth: PredId,
    pub(crate) does: PredId,
    pub(crate) role: PredId,
    pub(crate) init: PredId,
    pub(crate) legal: PredId,
    pub(crate) goal: PredId,
    pub(crate) terminal: PredId,
    pub(crate) next: PredId,
    /// The percepts of GDL-II, `(sees r p)`.
    pub(crate) sees: PredId,
}

impl Outputs {
    fn find(preds: &Preds) -> Outputs {
        let get = |name, arity| {
            preds
                .find(name, arity)
                .expect("compiling registers the state machine's relations")
        };
        Outputs {
            truth: get(SymbolId::TRUE, 1),
            does: get(SymbolId::DOES, 2),
            role: get(SymbolId::ROLE, 1),
            init: get(SymbolId::INIT, 1),
            legal: get(SymbolId::LEGAL, 2),
            goal: get(SymbolId::GOAL, 2),
            terminal: get(SymbolId::TERMINAL, 0),
            next: get(SymbolId::NEXT, 1),
            sees: get(SymbolId::SEES, 2),
        }
    }

    /// The relations read from outside: they are computed in full.
    fn read(&self) -> [PredId; 7] {
        [
            self.role,
            self.init,
            self.legal,
            self.goal,
            self.terminal,
            self.next,
            self.sees,
        ]
    }
}

/// For each query, the dynamic components it needs, in evaluation order.
#[derive(Clone, Debug, Default)]
pub(crate) struct Cones {
    pub(crate) init: Vec<usize>,
    pub(crate) legal: Vec<usize>,
    pub(crate) goal: Vec<usize>,
    pub(crate) terminal: Vec<usize>,
    pub(crate) next: Vec<usize>,
    pub(crate) sees: Vec<usize>,
}

impl Cones {
    fn new(program: &Program, outputs: &Outputs) -> Cones {
        let dynamic_cone = |target: PredId| -> Vec<usize> {
            let cone = program.cone(&[target]);
            cone.into_iter()
                .filter(|&c| program.components[c].dynamic)
                .collect()
        };
        Cones {
            init: dynamic_cone(outputs.init),
            legal: dynamic_cone(outputs.legal),
            goal: dynamic_cone(outputs.goal),
            terminal: dynamic_cone(outputs.terminal),
            next: dynamic_cone(outputs.next),
            sees: dynamic_cone(outputs.sees),
        }
    }
}

/// A game ready for queries.
#[derive(Debug)]
pub(crate) struct Prepared {
    /// The game's symbols (plus the names of demand relations).
    pub(crate) symbols: SymbolTable,
    /// Every term of the static part.
    pub(crate) store: TermStore,
    /// Static relations with their facts; dynamic ones as empty templates.
    pub(crate) frozen: Database,
    /// Per relation: true when it is dynamic.
    pub(crate) dynamic: Vec<bool>,
    /// The ground facts of dynamic relations, added to every state's relations.
    pub(crate) dynamic_facts: Vec<(PredId, Vec<TermId>)>,
    /// Per component: its plans (empty for static components).
    pub(crate) plans: Vec<ComponentPlans>,
    pub(crate) cones: Cones,
    pub(crate) outputs: Outputs,
    /// The roles, in order, as interned terms and as canonical strings.
    pub(crate) roles: Vec<TermId>,
    pub(crate) role_names: Vec<String>,
    /// Whether some rule defines `sees` (GDL-II).
    pub(crate) defines_sees: bool,
}

/// Checks and prepares `description`.
pub(crate) fn prepare(description: &Description) -> Result<Prepared, ReferenceError> {
    let mut description = description.clone();
    ggpnet_kif::read_as_gdl2(&mut description);
    let description = &description;
    let mut symbols = description.symbols.clone();
    let clauses = normalize(description, &mut symbols)?;
    let role_terms = read_roles(description)?;
    check_goal_values(description)?;

    let empty = TermStore::default();
    let mut terms = Terms::over(&empty);
    let rules = Rules::compile(&clauses, &mut terms);
    let original = Program::new(rules.clone(), &terms).map_err(|e| e.to_error(description, &rules.preds))?;
    let outputs = Outputs::find(&original.preds);
    let roles: Vec<TermId> = role_terms.iter().filter_map(|t| terms.intern(t)).collect();
    let program = choose_program(original, &rules, &outputs, roles.len(), &mut symbols, &mut terms);

    let needed = program.cone(&outputs.read());
    let mut frozen = evaluate_static(&program, &needed, &outputs, roles.len(), &symbols, &mut terms)?;
    let plans = plan_dynamic(&program, &needed, &outputs, roles.len(), &mut frozen, &terms);
    let cones = Cones::new(&program, &outputs);
    let dynamic_facts = (0..program.preds.len())
        .filter(|&p| program.dynamic[p] && !program.facts[p].is_empty())
        .map(|p| (PredId::from_index(p), program.facts[p].clone()))
        .collect();
    Ok(Prepared {
        symbols,
        store: terms.into_own(),
        frozen,
        dynamic: program.dynamic,
        dynamic_facts,
        plans,
        cones,
        outputs,
        roles,
        role_names: role_terms
            .iter()
            .map(|t| term_to_string(t, &description.symbols))
            .collect(),
        defines_sees: description
            .rules
            .iter()
            .any(|r| r.head.functor() == Some(SymbolId::SEES)),
    })
}

/// Evaluates the static components among `needed` in a database that starts with
/// the static facts.
fn evaluate_static(
    program: &Program,
    needed: &[usize],
    outputs: &Outputs,
    roles: usize,
    symbols: &SymbolTable,
    terms: &mut Terms,
) -> Result<Database, ReferenceError> {
    let mut frozen = with_static_facts(program, terms);
    for &c in needed.iter().filter(|&&c| !program.components[c].dynamic) {
        let sizes = Sizes::new(program, &frozen, outputs, roles);
        let mut plans = plan_component(program, c, &|p, s| sizes.estimate(p, s));
        attach_indexes(&mut plans, &mut frozen, terms);
        if evaluate(
            &plans,
            &mut frozen,
            terms,
            &mut Budget::new(STATIC_LIMIT, STATIC_STEPS),
        )
        .is_err()
        {
            let (name, arity) = program.preds.key(plans.preds[0]);
            return Err(ReferenceError::TooLarge {
                relation: format!("{}/{arity}", symbols.name(name)),
                limit: STATIC_LIMIT,
            });
        }
    }
    Ok(frozen)
}

/// Plans the dynamic components among `needed`, registering their indexes in
/// `frozen`; the plans of static components are left empty.
fn plan_dynamic(
    program: &Program,
    needed: &[usize],
    outputs: &Outputs,
    roles: usize,
    frozen: &mut Database,
    terms: &Terms,
) -> Vec<ComponentPlans> {
    let mut plans = vec![ComponentPlans::default(); program.components.len()];
    let init_shapes = initial_shapes(program, frozen, outputs, terms);
    for &c in needed.iter().filter(|&&c| program.components[c].dynamic) {
        let sizes = Sizes::new(program, frozen, outputs, roles).with_init(&init_shapes);
        plans[c] = plan_component(program, c, &|p, s| sizes.estimate(p, s));
        attach_indexes(&mut plans[c], frozen, terms);
    }
    plans
}

/// The program to evaluate: `original`, or the rewrite of its `rules` that computes
/// dynamic relations, and static ones too big to compute in full, on demand.
fn choose_program(
    original: Program,
    rules: &Rules,
    outputs: &Outputs,
    roles: usize,
    symbols: &mut SymbolTable,
    terms: &mut Terms,
) -> Program {
    let count = original.preds.len();
    let mut needed = vec![false; count];
    for c in original.cone(&outputs.read()) {
        for &p in &original.components[c].preds {
            needed[p.index()] = true;
        }
    }
    let too_big = too_big_to_compute(&original, outputs, roles, terms);
    let read = outputs.read();
    let mut lazy: Vec<bool> = (0..count)
        .map(|p| {
            let pred = PredId::from_index(p);
            needed[p]
                && !original.rules_of(pred).is_empty()
                && !read.contains(&pred)
                && (original.dynamic[p] || too_big[p])
        })
        .collect();
    loop {
        if !lazy.contains(&true) {
            return original;
        }
        match transform(rules, &lazy, &needed, symbols, terms) {
            Err(eager) => eager.iter().for_each(|p| lazy[p.index()] = false),
            Ok((rewritten, demand_for)) => match Program::new(rewritten, terms) {
                Ok(program) => return program,
                Err(Unstratified { pred, cycle, .. }) => {
                    // Compute in full the lazy relations whose rules or demands
                    // took part in the cycle; if there are none, give up laziness.
                    let culprits: Vec<PredId> = cycle
                        .iter()
                        .chain([&pred])
                        .map(|&p| demand_for.get(p.index()).copied().flatten().unwrap_or(p))
                        .filter(|p| lazy.get(p.index()) == Some(&true))
                        .collect();
                    if culprits.is_empty() {
                        lazy.fill(false);
                    }
                    culprits.iter().for_each(|p| lazy[p.index()] = false);
                }
            },
        }
    }
}

/// The trial: evaluates the static components of `program` with a budget each and
/// marks the relations of those that exceed it. A component reading a relation too
/// big to compute is not tried: it is too big as well.
fn too_big_to_compute(program: &Program, outputs: &Outputs, roles: usize, terms: &mut Terms) -> Vec<bool> {
    let mut trial = with_static_facts(program, terms);
    let mut too_big = vec![false; program.preds.len()];
    for c in program.cone(&outputs.read()) {
        let component = &program.components[c];
        if component.dynamic {
            continue;
        }
        let reads_too_big = component.clauses.iter().any(|&i| {
            program.clauses[i].body.iter().any(|lit| match lit {
                CLit::Pos(p, _) | CLit::Neg(p, _) => too_big[p.index()],
                _ => false,
            })
        });
        let fits = !reads_too_big && {
            let sizes = Sizes::new(program, &trial, outputs, roles);
            let mut plans = plan_component(program, c, &|p, s| sizes.estimate(p, s));
            attach_indexes(&mut plans, &mut trial, terms);
            evaluate(
                &plans,
                &mut trial,
                terms,
                &mut Budget::new(TRIAL_BUDGET, TRIAL_STEPS),
            )
            .is_ok()
        };
        if !fits {
            for &p in &component.preds {
                too_big[p.index()] = true;
            }
        }
    }
    too_big
}

/// A database holding the facts of the static relations of `program`.
fn with_static_facts(program: &Program, terms: &Terms) -> Database {
    let mut db = Database {
        relations: vec![Default::default(); program.preds.len()],
    };
    for (p, facts) in program.facts.iter().enumerate() {
        if !program.dynamic[p] {
            for &fact in facts {
                db.relations[p].insert(fact, terms);
            }
        }
    }
    db
}

/// The function symbol and arity of each initial fact (`None` for constants),
/// when the initial state is static.
fn initial_shapes(
    program: &Program,
    db: &Database,
    outputs: &Outputs,
    terms: &Terms,
) -> Vec<Option<(SymbolId, usize)>> {
    if program.dynamic[outputs.init.index()] {
        return Vec::new();
    }
    db.relation(outputs.init)
        .facts()
        .iter()
        .filter_map(|&sentence| terms.args(sentence).first().copied())
        .map(|fact| match terms.node(fact) {
            Node::Compound(f, args) => Some((*f, args.len())),
            Node::Atom(_) => None,
        })
        .collect()
}

/// Size guesses for the join planner.
struct Sizes<'a> {
    program: &'a Program,
    db: &'a Database,
    outputs: &'a Outputs,
    roles: usize,
    init_shapes: &'a [Option<(SymbolId, usize)>],
}

impl<'a> Sizes<'a> {
    fn new(program: &'a Program, db: &'a Database, outputs: &'a Outputs, roles: usize) -> Self {
        Sizes {
            program,
            db,
            outputs,
            roles,
            init_shapes: &[],
        }
    }

    /// Guess the number of `true` facts from the initial state.
    fn with_init(mut self, init_shapes: &'a [Option<(SymbolId, usize)>]) -> Self {
        self.init_shapes = init_shapes;
        self
    }

    /// The guessed number of facts of `pred` a lookup through `spec` returns.
    fn estimate(&self, pred: PredId, spec: &IndexSpec) -> f64 {
        let p = pred.index();
        let size = if pred == self.outputs.truth {
            // The state facts of the shape the pattern asks for at `(true _)`.
            let shape = spec.entries.iter().find_map(|e| match e {
                SpecEntry::Shape { path, functor, arity } if path[..] == [0] => Some((*functor, *arity)),
                _ => None,
            });
            let matching = self
                .init_shapes
                .iter()
                .filter(|s| shape.is_none() || **s == shape)
                .count();
            matching.max(1) as f64
        } else if pred == self.outputs.does {
            self.roles.max(1) as f64
        } else if self.program.dynamic.get(p) == Some(&false) {
            self.db.relations.get(p).map_or(UNKNOWN_SIZE, |r| r.len() as f64)
        } else {
            UNKNOWN_SIZE
        };
        size * KEY_SELECTIVITY.powi(spec.keys() as i32)
    }
}

/// Plans every clause of component `c`, and its delta variants when it is
/// recursive.
fn plan_component(
    program: &Program,
    c: usize,
    estimate: &dyn Fn(PredId, &IndexSpec) -> f64,
) -> ComponentPlans {
    let component = &program.components[c];
    let own = &component.preds;
    let estimate = |pred: PredId, spec: &IndexSpec| {
        if own.contains(&pred) {
            UNKNOWN_SIZE * KEY_SELECTIVITY.powi(spec.keys() as i32)
        } else {
            estimate(pred, spec)
        }
    };
    let mut plans = ComponentPlans {
        preds: component.preds.clone(),
        first: Vec::new(),
        deltas: Vec::new(),
    };
    for &i in &component.clauses {
        let clause = &program.clauses[i];
        plans.first.push(Plan::new(clause, None, &estimate));
        if !component.recursive {
            continue;
        }
        for (position, lit) in clause.body.iter().enumerate() {
            if matches!(lit, CLit::Pos(..)) && program.is_recursive_literal(i, position) {
                plans.deltas.push(Plan::new(clause, Some(position), &estimate));
            }
        }
    }
    plans
}

/// Registers the indexes the plans use in the relations of `db` (building them
/// over the facts already there) and tells the plans their numbers.
fn attach_indexes(plans: &mut ComponentPlans, db: &mut Database, terms: &Terms) {
    for plan in plans.first.iter_mut().chain(plans.deltas.iter_mut()) {
        plan.attach_indexes(|pred, spec| db.relation_mut(pred).index_for(spec, terms));
    }
}

/// The roles, from the `(role r)` facts in file order.
fn read_roles(description: &Description) -> Result<Vec<Term>, ReferenceError> {
    let mut roles: Vec<Term> = Vec::new();
    for rule in &description.rules {
        if rule.head.functor() != Some(SymbolId::ROLE) {
            continue;
        }
        let text = || rule_to_string(rule, &description.symbols);
        let role = match rule.head.args() {
            [role] if rule.body.is_empty() && role.is_ground() => role,
            _ => {
                return Err(ReferenceError::InvalidRoles {
                    reason: format!("{} is not a fact (role r) with a ground r", text()),
                })
            }
        };
        if roles.contains(role) {
            return Err(ReferenceError::InvalidRoles {
                reason: format!("{} is declared twice", text()),
            });
        }
        roles.push(role.clone());
    }
    Ok(roles)
}

/// Rejects goal rules whose value is ground but not an integer.
fn check_goal_values(description: &Description) -> Result<(), ReferenceError> {
    for rule in &description.rules {
        let [_, value] = rule.head.args() else {
            continue;
        };
        if rule.head.functor() != Some(SymbolId::GOAL) || !value.is_ground() {
            continue;
        }
        let integer = match value {
            Term::Atom(s) => description.symbols.name(*s).parse::<i64>().is_ok(),
            _ => false,
        };
        if !integer {
            return Err(ReferenceError::InvalidRule {
                rule: rule_to_string(rule, &description.symbols),
                reason: format!(
                    "the goal value {} is not an integer",
                    term_to_string(value, &description.symbols)
                ),
            });
        }
    }
    Ok(())
}
