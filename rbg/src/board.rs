//! The board graph: vertices, directions and the edge function, with the
//! initial piece of every vertex, built from the explicit node list or the
//! predefined generators `rectangle`, `hexagon` and `cuboid` (omitted pieces
//! leave the vertex out).

use crate::error::{ErrorKind, Pos, RbgError};

/// The most vertices a board may have.
pub const MAX_CELLS: usize = 1 << 16;
/// The most directions (edge labels) a board may have.
pub const MAX_DIRECTIONS: usize = 1 << 10;
/// The largest `vertices x directions` table.
pub(crate) const MAX_EDGE_TABLE: usize = 1 << 22;
/// "No vertex" in the edge table.
pub(crate) const NONE: u32 = u32::MAX;

/// A board: `next[cell * dirs + dir]` is the vertex reached from `cell` by `dir`, or [`NONE`].
#[derive(Clone, Debug, Default)]
pub(crate) struct Board {
    pub(crate) dirs: Vec<String>,
    pub(crate) names: Vec<String>,
    pub(crate) next: Vec<u32>,
    pub(crate) initial: Vec<u16>,
}

impl Board {
    pub(crate) fn cells(&self) -> usize {
        self.initial.len()
    }
}

/// A grid of optional pieces: `layers[z][row][col]`.
pub(crate) type Grid = Vec<Vec<Vec<Option<u16>>>>;

fn too_large(pos: Pos, what: String) -> RbgError {
    RbgError::new(ErrorKind::Board, pos, what)
}

/// Numbers the present squares of `grid` in layer, row, column order and
/// links them with `step(z, row, col, dir)`, which gives the neighbour's
/// coordinates for each of the `dirs`.
fn build(
    dirs: &[String],
    grid: &Grid,
    pos: Pos,
    step: impl Fn(usize, usize, usize, usize) -> Option<(usize, usize, usize)>,
) -> Result<Board, RbgError> {
    let mut id: Vec<Vec<Vec<u32>>> = Vec::with_capacity(grid.len());
    let mut board = Board {
        dirs: dirs.to_vec(),
        ..Board::default()
    };
    for (z, layer) in grid.iter().enumerate() {
        let mut rows = Vec::with_capacity(layer.len());
        for (r, line) in layer.iter().enumerate() {
            let mut ids = Vec::with_capacity(line.len());
            for (c, piece) in line.iter().enumerate() {
                ids.push(match piece {
                    Some(p) => {
                        board.initial.push(*p);
                        board.names.push(format!("{z}_{r}_{c}"));
                        (board.initial.len() - 1) as u32
                    }
                    None => NONE,
                });
            }
            rows.push(ids);
        }
        id.push(rows);
    }
    check_size(board.cells(), dirs.len(), pos)?;
    board.next = vec![NONE; board.cells() * dirs.len()];
    for (z, layer) in id.iter().enumerate() {
        for (r, line) in layer.iter().enumerate() {
            for (c, &me) in line.iter().enumerate() {
                if me == NONE {
                    continue;
                }
                for d in 0..dirs.len() {
                    if let Some((z2, r2, c2)) = step(z, r, c, d) {
                        let to = id.get(z2).and_then(|l| l.get(r2)).and_then(|l| l.get(c2));
                        board.next[me as usize * dirs.len() + d] = to.copied().unwrap_or(NONE);
                    }
                }
            }
        }
    }
    if board.cells() == 0 {
        return Err(too_large(pos, "the board has no vertex".into()));
    }
    Ok(board)
}

pub(crate) fn check_size(cells: usize, dirs: usize, pos: Pos) -> Result<(), RbgError> {
    if cells > MAX_CELLS {
        return Err(too_large(
            pos,
            format!("{cells} vertices, more than the limit {MAX_CELLS}"),
        ));
    }
    if dirs > MAX_DIRECTIONS || cells * dirs > MAX_EDGE_TABLE {
        return Err(too_large(
            pos,
            format!("{dirs} directions on {cells} vertices exceed the limits"),
        ));
    }
    Ok(())
}

/// `rectangle(up, down, left, right, lines)`: all lines the same length.
pub(crate) fn rectangle(dirs: &[String], lines: &[Vec<Option<u16>>], pos: Pos) -> Result<Board, RbgError> {
    if lines.iter().any(|l| l.len() != lines[0].len()) {
        return Err(too_large(pos, "the lines of a rectangle differ in length".into()));
    }
    let grid = vec![lines.to_vec()];
    build(dirs, &grid, pos, |_, r, c, d| {
        Some(match d {
            0 => (0, r.checked_sub(1)?, c),
            1 => (0, r + 1, c),
            2 => (0, r, c.checked_sub(1)?),
            _ => (0, r, c + 1),
        })
    })
}

/// `cuboid(up, down, left, right, front, back, layers)`: the first layer is
/// the back one, `front` goes to the next layer.
pub(crate) fn cuboid(dirs: &[String], layers: &Grid, pos: Pos) -> Result<Board, RbgError> {
    let (rows, cols) = (layers[0].len(), layers[0].first().map_or(0, Vec::len));
    if layers
        .iter()
        .any(|l| l.len() != rows || l.iter().any(|line| line.len() != cols))
    {
        return Err(too_large(pos, "the layers of a cuboid differ in shape".into()));
    }
    build(dirs, layers, pos, |z, r, c, d| {
        Some(match d {
            0 => (z, r.checked_sub(1)?, c),
            1 => (z, r + 1, c),
            2 => (z, r, c.checked_sub(1)?),
            3 => (z, r, c + 1),
            4 => (z + 1, r, c),
            _ => (z.checked_sub(1)?, r, c),
        })
    })
}

/// `hexagon(northWest, northEast, east, southEast, southWest, west, lines)`:
/// each line one longer than the one before up to the longest, then each one shorter.
pub(crate) fn hexagon(dirs: &[String], lines: &[Vec<Option<u16>>], pos: Pos) -> Result<Board, RbgError> {
    let len: Vec<usize> = lines.iter().map(Vec::len).collect();
    let mut shrinking = false;
    for w in len.windows(2) {
        if w[1] == w[0] + 1 && !shrinking {
            continue;
        }
        if w[1] + 1 == w[0] {
            shrinking = true;
            continue;
        }
        return Err(too_large(
            pos,
            "the lines of a hexagon must grow by one, then shrink by one".into(),
        ));
    }
    let grid = vec![lines.to_vec()];
    build(dirs, &grid, pos, |_, r, c, d| {
        // Whether the line above (below) is shorter than this one.
        let above_shorter = r > 0 && len[r - 1] < len[r];
        let below_longer = r + 1 < len.len() && len[r + 1] > len[r];
        Some(match d {
            0 if above_shorter => (0, r.checked_sub(1)?, c.checked_sub(1)?),
            0 => (0, r.checked_sub(1)?, c),
            1 if above_shorter => (0, r.checked_sub(1)?, c),
            1 => (0, r.checked_sub(1)?, c + 1),
            2 => (0, r, c + 1),
            3 if below_longer => (0, r + 1, c + 1),
            3 => (0, r + 1, c),
            4 if below_longer => (0, r + 1, c),
            4 => (0, r + 1, c.checked_sub(1)?),
            _ => (0, r, c.checked_sub(1)?),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirs(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_papers_hexagon() {
        let e = Some(0u16);
        let lines = vec![vec![e, e], vec![e, e, e], vec![e, e]];
        let b = hexagon(&dirs(&["nw", "ne", "e", "se", "sw", "w"]), &lines, Pos::default()).unwrap();
        // Vertices in order: v00 v10 / v01 v11 v21 / v02 v12 = 0 1 / 2 3 4 / 5 6.
        let n = |cell: usize, d: usize| b.next[cell * 6 + d];
        assert_eq!(
            [n(0, 2), n(0, 3), n(0, 4), n(0, 0), n(0, 1)],
            [1, 3, 2, NONE, NONE]
        );
        assert_eq!(
            [n(3, 0), n(3, 1), n(3, 2), n(3, 3), n(3, 4), n(3, 5)],
            [0, 1, 4, 6, 5, 2]
        );
        assert_eq!([n(5, 1), n(5, 0), n(5, 2)], [3, 2, 6]);
        assert_eq!(
            [n(4, 0), n(4, 4), n(4, 5), n(4, 1), n(4, 3)],
            [1, 6, 3, NONE, NONE]
        );
    }

    #[test]
    fn a_rectangle_with_a_hole() {
        let e = Some(0u16);
        let lines = vec![vec![e, e, e], vec![e, None, e], vec![e, e, e]];
        let b = rectangle(&dirs(&["u", "d", "l", "r"]), &lines, Pos::default()).unwrap();
        assert_eq!(b.cells(), 8);
        assert_eq!(b.next[4 + 1], NONE); // below the top middle is the hole
        assert_eq!(b.next[3 * 4 + 3], NONE); // right of the middle left is the hole
        assert_eq!(b.next[3 * 4], 0);
        assert!(hexagon(
            &dirs(&["a", "b", "c", "d", "e", "f"]),
            &[vec![e], vec![e]],
            Pos::default()
        )
        .is_err());
    }

    #[test]
    fn a_cuboid() {
        let (e, w) = (Some(0u16), Some(1u16));
        let layers = vec![vec![vec![e, e]], vec![vec![w, w]]];
        let b = cuboid(&dirs(&["u", "d", "l", "r", "f", "b"]), &layers, Pos::default()).unwrap();
        assert_eq!(b.cells(), 4);
        assert_eq!((b.next[4], b.next[2 * 6 + 5], b.next[2 * 6 + 4]), (2, 0, NONE));
        assert_eq!(b.initial, [0, 0, 1, 1]);
    }
}
