//! The parts every playable game needs, checked on the description before
//! grounding: at least one role, a rule for `terminal`, and a goal rule that can
//! apply to each role. A role declared twice is only worth a warning.

use crate::error::{ErrorKind, GdlError};
use ggpnet_kif::{rule_to_string, Description, Rule, SymbolId, Term};

/// Whether the goal rule head argument `pattern` can stand for the ground `role`
/// (a variable matches anything).
fn may_match(pattern: &Term, role: &Term) -> bool {
    match (pattern, role) {
        (Term::Var(_), _) => true,
        (Term::Compound(f, xs), Term::Compound(g, ys)) => {
            f == g && xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| may_match(x, y))
        }
        _ => pattern == role,
    }
}

/// The error naming `rule` (when there is one) and what is missing.
fn missing(description: &Description, rule: Option<&Rule>, message: String) -> GdlError {
    GdlError {
        kind: ErrorKind::Unplayable,
        span: rule.map(|r| r.span),
        rule: rule.map(|r| rule_to_string(r, &description.symbols)),
        message,
    }
}

/// The role declarations of `description`, in order.
fn roles(description: &Description) -> Vec<&Rule> {
    description
        .rules
        .iter()
        .filter(|r| r.head.functor() == Some(SymbolId::ROLE) && r.head.args().len() == 1)
        .collect()
}

/// Checks that `description` has a role, a `terminal` rule and a goal rule for each
/// role; returns a warning for each role declared more than once.
pub fn check_playable(description: &Description) -> Result<Vec<String>, GdlError> {
    if description.rules.is_empty() {
        return Err(missing(
            description,
            None,
            "the game description is empty (no rules)".into(),
        ));
    }
    let roles = roles(description);
    if roles.is_empty() {
        return Err(missing(
            description,
            None,
            "game has no role (no (role ...) fact)".into(),
        ));
    }
    let heads = |relation: SymbolId| {
        description
            .rules
            .iter()
            .filter(move |r| r.head.functor() == Some(relation))
    };
    if heads(SymbolId::TERMINAL).next().is_none() {
        return Err(missing(description, None, "no rule defines terminal".into()));
    }
    let mut warnings = Vec::new();
    for (i, declaration) in roles.iter().enumerate() {
        let role = &declaration.head.args()[0];
        let name = ggpnet_kif::term_to_string(role, &description.symbols);
        if let Some(first) = roles[..i].iter().find(|r| r.head.args()[0] == *role) {
            warnings.push(format!(
                "warning at {}: role {name} declared again (first at {}); the repeat is ignored",
                declaration.span, first.span
            ));
            continue;
        }
        // The random role of GDL-II is no player: it needs no goal (`pennies` gives it none).
        if role != &Term::Atom(SymbolId::RANDOM)
            && !heads(SymbolId::GOAL).any(|g| g.head.args().first().is_some_and(|p| may_match(p, role)))
        {
            return Err(missing(
                description,
                Some(declaration),
                format!("role {name} has no goal rule"),
            ));
        }
    }
    Ok(warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(source: &str) -> Result<Vec<String>, String> {
        check_playable(&ggpnet_kif::parse(source).unwrap()).map_err(|e| e.to_string())
    }

    #[test]
    fn missing_parts_are_errors() {
        assert_eq!(
            check("").unwrap_err(),
            "error: the game description is empty (no rules)"
        );
        assert_eq!(
            check("; only a comment\n").unwrap_err(),
            "error: the game description is empty (no rules)"
        );
        assert_eq!(
            check("(<= terminal (true x)) (goal r 100)").unwrap_err(),
            "error: game has no role (no (role ...) fact)"
        );
        assert_eq!(
            check("(role r) (goal r 100)").unwrap_err(),
            "error: no rule defines terminal"
        );
        assert_eq!(
            check("(role r)\n(role s) terminal (goal r 100)").unwrap_err(),
            "error at 2:1: role s has no goal rule\n  in rule (role s)"
        );
    }

    #[test]
    fn goal_rules_with_variables_cover_every_role() {
        assert_eq!(
            check("(role r) (role s) terminal (<= (goal ?p 50) (role ?p))"),
            Ok(vec![])
        );
        let two = check("(role r) (role (team s)) terminal (goal r 0) (<= (goal (team ?x) 0) (t ?x))");
        assert_eq!(two, Ok(vec![]));
    }

    #[test]
    fn a_role_declared_twice_is_a_warning() {
        assert_eq!(
            check("(role r) terminal (goal r 0)\n(role r)"),
            Ok(vec![
                "warning at 2:1: role r declared again (first at 1:1); the repeat is ignored".into()
            ])
        );
    }
}
