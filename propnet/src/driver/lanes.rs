//! Batched flat Monte-Carlo on the lanes evaluator, one playout per lane. Each
//! step evaluates the state-only part for every lane, chooses every lane's
//! joint move from that lane's own random generator exactly as the scalar
//! playout loop does (per role in order, [`Stream::draw`] over the legal
//! moves in move order), evaluates the move part, and loads the next
//! states; a lane that reached a terminal state restarts from the start
//! state, and so does a lane whose playout reached the depth limit
//! (abandoned, as the scalar loop abandons it).
//!
//! A lane word is held in AVX-512 registers when the CPU has them, else in two
//! AVX2 or four SSE2 registers. Per-lane counts of legal moves and the ranks
//! drawn are bit-sliced (plane `p` holds bit `p` of every lane's number), so
//! counting costs a few word operations per move for all lanes; eight lanes
//! draw their ranks at once; only moves legal in some lane are walked.
//! The playouts that end are scored word-wise too ([`GoalsByRole`]): each
//! goal is read once for all lanes, not once for every lane that ended (on
//! the small games, where a lane ends every few steps, the per-lane reading
//! took 14% of a run).

use super::PlayoutTotals;
use crate::evaluator::{
    and, for_each_lane, not, or, xor, Evaluator, Lane, LaneValues, Lanes, OnLines, VectorWidth, ALL_LANES,
    LANES, LANE_WORDS, NO_LANES,
};
use crate::game::{Game, Move, State};
use crate::layout::CompiledNet;
use crate::random::{Stream, StreamGroup};
use std::sync::Arc;

/// Per-thread state of [`LANES`] simultaneous random playouts.
pub struct LanePlayouts {
    game: Arc<Game>,
    net: Arc<CompiledNet>,
    evaluator: Arc<Lanes>,
    values: LaneValues,
    /// The next value of every base, before the bases are overwritten.
    next: LaneValues,
    /// The lanes' random streams, eight to a block.
    streams: Vec<StreamGroup>,
    /// Steps taken so far.
    steps: u64,
    /// The step at which each lane's playout visited its start state: its
    /// depth is `steps` less that.
    starts: Vec<u64>,
    /// At most the earliest of `starts`.
    earliest_start: u64,
    /// Moves after which a playout is abandoned.
    max_depth: u64,
    /// The moves walked in the last step (legal in some active lane), whose
    /// inputs hold its choices: the first `walked` of them.
    walk: Vec<u32>,
    walked: usize,
    /// The game's goals, to score finished lanes by.
    goals: GoalsByRole,
    /// Lanes that played a move in the last step.
    moved: Lane,
    /// The value of each base in the state every playout starts from.
    start: Vec<bool>,
    totals: PlayoutTotals,
    /// The widest vector registers the CPU has.
    vector: VectorWidth,
}

impl LanePlayouts {
    /// Lanes over `game` whose playouts all start from `from` (a state of the
    /// game); with `streams` = `(seed, first_stream)`, lane `l` draws from
    /// `Stream::new(seed, first_stream + l)`; a playout that reaches `max_depth`
    /// moves (at least 1) without ending is abandoned.
    pub fn new(game: Arc<Game>, from: &State, streams: (u64, u64), max_depth: u64) -> LanePlayouts {
        let evaluator = Arc::new(Lanes::new(game.net()));
        LanePlayouts::with_evaluator(evaluator, game, from, streams, max_depth)
    }

    /// [`LanePlayouts::new`] on an evaluator of the game's net that other
    /// threads share.
    pub fn with_evaluator(
        evaluator: Arc<Lanes>,
        game: Arc<Game>,
        from: &State,
        streams: (u64, u64),
        max_depth: u64,
    ) -> LanePlayouts {
        assert!(
            Arc::ptr_eq(evaluator.net(), game.net()),
            "a lanes evaluator of another game's net"
        );
        let net = Arc::clone(game.net());
        let roles = game.roles().len();
        let mut lanes = LanePlayouts {
            values: evaluator.cache(),
            evaluator,
            next: LaneValues::new(net.base_slots().len()),
            streams: Vec::new(),
            steps: 0,
            starts: vec![0; LANES],
            earliest_start: 0,
            max_depth: max_depth.max(1),
            walk: vec![0; game.role_moves().iter().map(Vec::len).sum()],
            walked: 0,
            moved: NO_LANES,
            goals: GoalsByRole::new(&game),
            totals: PlayoutTotals::new(roles),
            vector: VectorWidth::detect(),
            start: Vec::new(),
            game,
            net,
        };
        lanes.restart_from(from, streams);
        lanes
    }

    /// Starts every lane anew from `from` (a state of the game), drawing from
    /// `streams` as [`LanePlayouts::new`] does, with empty totals: the same
    /// lanes as new ones, on the buffers already allocated (a tree search
    /// that evaluates each leaf by a batch of lanes pays its set-up once).
    pub fn restart_from(&mut self, from: &State, streams: (u64, u64)) {
        assert_eq!(
            from.0.len(),
            self.net.base_slots().len(),
            "a state of another game"
        );
        let (seed, first_stream) = streams;
        self.streams = (0..LANES as u64 / 8)
            .map(|b| {
                StreamGroup::new(std::array::from_fn(|i| {
                    Stream::new(seed, first_stream + 8 * b + i as u64)
                }))
            })
            .collect();
        self.steps = 0;
        self.starts.fill(0);
        self.earliest_start = 0;
        self.moved = NO_LANES;
        self.totals = PlayoutTotals::new(self.game.roles().len());
        self.start.clear();
        self.start.extend(from.0.iter().by_vals());
        for (b, &slot) in self.net.base_slots().iter().enumerate() {
            self.values[slot as usize] = if self.start[b] { ALL_LANES } else { NO_LANES };
        }
    }

    /// What the finished playouts and visited states add up to.
    pub fn totals(&self) -> &PlayoutTotals {
        &self.totals
    }

    /// Every slot's lane word after the last step: the state-only slots hold
    /// the values of the states that step visited, except the base slots,
    /// which already hold the states the next step visits.
    pub(crate) fn values(&self) -> &[Lane] {
        &self.values
    }

    /// The lanes that played a move in the last step (the others were in a
    /// terminal state, or abandoned their playout, and restarted).
    pub(crate) fn moved(&self) -> &Lane {
        &self.moved
    }

    /// The state lane `lane` is in now (the one the next step visits).
    pub fn state(&self, lane: usize) -> State {
        let (word, bit) = (lane / 64, lane % 64);
        State(
            self.net
                .base_slots()
                .iter()
                .map(|&s| (self.values[s as usize][word] >> bit) & 1 != 0)
                .collect(),
        )
    }

    /// The joint move (input indexes in role order) lane `lane` played in the
    /// last step, or `None` if it was in a terminal state (or one where some role
    /// had no legal move) and restarted.
    pub fn last_joint(&self, lane: usize) -> Option<Vec<u32>> {
        let (word, bit) = (lane / 64, lane % 64);
        let taken =
            |m: &&Move| (self.values[self.net.move_slots()[m.0 as usize] as usize][word] >> bit) & 1 != 0;
        if (self.moved[word] >> bit) & 1 == 0 {
            return None;
        }
        // The moves' inputs still hold the last step's choices.
        self.game
            .role_moves()
            .iter()
            .map(|moves| moves.iter().find(taken).map(|m| m.0))
            .collect()
    }

    /// Visits one state in every lane and moves on.
    pub fn step(&mut self) {
        match self.vector.bits() {
            // SAFETY: a `VectorWidth` is 512 only when the CPU has AVX-512F.
            #[cfg(target_arch = "x86_64")]
            512 => unsafe { self.step_avx512() },
            // SAFETY: and 256 only when it has AVX2.
            #[cfg(target_arch = "x86_64")]
            256 => unsafe { self.step_avx2() },
            _ => self.step_lanes::<128>(0),
        }
    }

    /// [`Self::step`] compiled for AVX-512F.
    ///
    /// # Safety
    /// The CPU must have AVX-512F.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    unsafe fn step_avx512(&mut self) {
        self.step_lanes::<512>(0)
    }

    /// [`Self::step`] compiled for AVX2.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn step_avx2(&mut self) {
        self.step_lanes::<256>(0)
    }

    /// [`Self::step`], choosing moves with at least `fewest_planes` planes, in
    /// vector registers of `VECTOR_BITS` (the CPU must have them: AVX-512F for
    /// 512, AVX2 for 256; 128 is every x86-64's SSE2, or plain words elsewhere).
    #[inline(always)]
    fn step_lanes<const VECTOR_BITS: u32>(&mut self, fewest_planes: u32) {
        // The net is read through `self.net` at each use, not through a clone
        // of the `Arc`: its reference count is shared with the other threads.
        self.evaluator.load_states(&mut self.values);
        self.totals.states += LANES as u64;
        let terminal = self.values[self.net.terminal_slot() as usize];
        self.finish_playouts(&terminal);
        let mut active = not(&terminal);
        if self.steps - self.earliest_start >= self.max_depth {
            self.abandon_at_limit(&mut active);
        }
        for &m in &self.walk[..std::mem::take(&mut self.walked)] {
            self.values[self.net.move_slots()[m as usize] as usize] = NO_LANES;
        }
        for role in 0..self.game.roles().len() {
            self.choose::<VECTOR_BITS>(role, &mut active, fewest_planes);
        }
        self.moved = active;
        self.totals.transitions += lane_count(&active);
        self.evaluator.load_moves(&mut self.values);
        // Read every next value before writing any base: a next value may be a base.
        let restart = not(&active);
        let net = &*self.net;
        for (b, &next) in net.next_slots().iter().enumerate() {
            let next = and(&self.values[next as usize], &active);
            self.next[b] = if self.start[b] { or(&next, &restart) } else { next };
        }
        for (&slot, next) in net.base_slots().iter().zip(self.next.iter()) {
            self.values[slot as usize] = *next;
        }
        self.steps += 1;
        let (starts, steps) = (&mut self.starts, self.steps);
        for_each_lane(&restart, |lane| starts[lane] = steps);
    }

    /// Takes the lanes of `active` whose playout reached the depth limit out of
    /// it, counting their playouts as abandoned (they restart at the next step).
    fn abandon_at_limit(&mut self, active: &mut Lane) {
        let mut cut = NO_LANES;
        for_each_lane(active, |lane| {
            if self.steps - self.starts[lane] >= self.max_depth {
                cut[lane / 64] |= 1 << (lane % 64);
                self.totals.abandoned += 1;
                self.totals.at_depth_limit += 1;
            }
        });
        *active = and(active, &not(&cut));
        let ongoing = self
            .starts
            .iter()
            .enumerate()
            .filter(|&(lane, _)| (cut[lane / 64] >> (lane % 64)) & 1 == 0);
        self.earliest_start = ongoing.map(|(_, &start)| start).min().unwrap_or(self.steps + 1);
    }

    /// Adds the playouts of the `terminal` lanes to the totals, their goals
    /// read word-wise ([`GoalsByRole::score`]).
    fn finish_playouts(&mut self, terminal: &Lane) {
        if *terminal == NO_LANES {
            return;
        }
        let totals = &mut self.totals;
        let (starts, steps) = (&self.starts, self.steps);
        for_each_lane(terminal, |lane| totals.depth_sum += steps - starts[lane]);
        totals.playouts += lane_count(terminal);
        let (values, slots) = (&self.values, self.net.goal_slots());
        self.goals.score(terminal, |g| &values[slots[g] as usize], totals);
    }

    /// Draws `role`'s move in every active lane; a lane where the role has no
    /// legal move is abandoned (it restarts without a result). Counts of legal
    /// moves and ranks of the drawn move are kept bit-sliced (plane `p` holds
    /// bit `p` of every lane's number), so counting and selecting cost a few word
    /// operations per move for all lanes at once. The number of planes is a
    /// constant of the code, so that the planes stay in registers: the fewest
    /// of the instances below that hold the count of the role's moves, and at
    /// least `fewest_planes` (more planes than needed count and select the same).
    #[inline(always)]
    fn choose<const VECTOR_BITS: u32>(&mut self, role: usize, active: &mut Lane, fewest_planes: u32) {
        match fewest_planes.max(usize::BITS - self.game.role_moves()[role].len().leading_zeros()) {
            0..=1 => self.choose_in::<1, VECTOR_BITS>(role, active),
            2 => self.choose_in::<2, VECTOR_BITS>(role, active),
            3 => self.choose_in::<3, VECTOR_BITS>(role, active),
            4 => self.choose_in::<4, VECTOR_BITS>(role, active),
            5 => self.choose_in::<5, VECTOR_BITS>(role, active),
            6 => self.choose_in::<6, VECTOR_BITS>(role, active),
            7 => self.choose_in::<7, VECTOR_BITS>(role, active),
            8 => self.choose_in::<8, VECTOR_BITS>(role, active),
            9..=10 => self.choose_in::<10, VECTOR_BITS>(role, active),
            11..=12 => self.choose_in::<12, VECTOR_BITS>(role, active),
            13..=16 => self.choose_in::<16, VECTOR_BITS>(role, active),
            17..=20 => self.choose_in::<20, VECTOR_BITS>(role, active),
            _ => self.choose_in::<32, VECTOR_BITS>(role, active),
        }
    }

    /// [`Self::choose`] with `P` planes.
    #[inline(always)]
    fn choose_in<const P: usize, const VECTOR_BITS: u32>(&mut self, role: usize, active: &mut Lane) {
        let net = &*self.net;
        let moves = &self.game.role_moves()[role];
        let legal_of = |values: &[Lane], m: &Move| values[net.legal_slots()[m.0 as usize] as usize];
        let mut planes = OnLines([NO_LANES; P]);
        let planes = &mut planes.0;
        let mut waiting = CarrySave::<P>::new();
        // Only the moves legal in some active lane are counted and walked
        // (in games of thousands of moves, a few of them).
        let first_walked = self.walked;
        let mut walked = first_walked;
        for m in moves {
            let legal = and(&legal_of(&self.values, m), active);
            if legal != NO_LANES {
                waiting.add(planes, legal);
                self.walk[walked] = m.0;
                walked += 1;
            }
        }
        self.walked = walked;
        waiting.flush(planes);
        // Per word of 64 lanes: each lane's rank drawn below its count, into the planes.
        let mut abandoned = NO_LANES;
        for w in 0..LANE_WORDS {
            if active[w] == 0 {
                continue;
            }
            // Lanes with one legal move take it without a draw (rank 0); lanes with
            // none are abandoned; only the others draw.
            let low = planes[0][w];
            let high = planes[1..].iter().fold(0, |acc, plane| acc | plane[w]);
            let empty = active[w] & !(low | high);
            abandoned[w] = empty;
            self.totals.abandoned += u64::from(empty.count_ones());
            // Eight lanes at a time: their counts from the planes, their ranks
            // drawn side by side, the ranks back into the planes.
            let drawing = active[w] & high;
            let mut ranks = [0u64; P];
            for group in 0..8 {
                let lanes = ((drawing >> (8 * group)) & 0xFF) as u8;
                if lanes == 0 {
                    continue;
                }
                let counts: [u8; P] = std::array::from_fn(|p| (planes[p][w] >> (8 * group)) as u8);
                let block = &mut self.streams[w * 8 + group];
                let drawn = match VECTOR_BITS {
                    // SAFETY: `step_lanes` runs with 512 only when the CPU has AVX-512F.
                    #[cfg(target_arch = "x86_64")]
                    512 => unsafe { block.draw_sliced_avx512(lanes, &counts) },
                    // SAFETY: and with 256 only when it has AVX2.
                    #[cfg(target_arch = "x86_64")]
                    256 => unsafe { block.draw_sliced_avx2(lanes, &counts) },
                    _ => block.draw_sliced(lanes, &counts),
                };
                for (rank, bits) in ranks.iter_mut().zip(drawn) {
                    *rank |= u64::from(bits) << (8 * group);
                }
            }
            for (plane, &rank) in planes.iter_mut().zip(&ranks) {
                plane[w] = rank;
            }
        }
        *active = and(active, &not(&abandoned));
        // Walk the moves in input order, counting each active lane's rank down at
        // every legal move; a lane takes the move where its rank drops below zero,
        // which is the borrow out of the top plane: that is the move's input.
        // Once below zero a rank never borrows out again (it stays above
        // -2^P), so no lane is taken out of the walk and the walk has no branch.
        for &m in &self.walk[first_walked..self.walked] {
            let mut borrow = and(&legal_of(&self.values, &Move(m)), active);
            for plane in planes.iter_mut() {
                let next_borrow = and(&borrow, &not(plane));
                *plane = xor(plane, &borrow);
                borrow = next_borrow;
            }
            self.values[net.move_slots()[m as usize] as usize] = borrow;
        }
    }
}

/// How many lanes `lanes` holds.
pub(super) fn lane_count(lanes: &Lane) -> u64 {
    lanes.iter().map(|w| u64::from(w.count_ones())).sum()
}

/// Each role's goals (value and index into [`Game::goals`]), highest value
/// first: the first that holds for a lane is the role's best there.
pub(super) struct GoalsByRole(Vec<Vec<(i64, usize)>>);

impl GoalsByRole {
    /// The goals of `game`.
    pub(super) fn new(game: &Game) -> GoalsByRole {
        let mut goals = vec![Vec::new(); game.roles().len()];
        for (g, &(role, value)) in game.goals().iter().enumerate() {
            goals[role].push((value, g));
        }
        for role in &mut goals {
            role.sort_unstable_by_key(|goal| std::cmp::Reverse(goal.0));
        }
        GoalsByRole(goals)
    }

    /// The number of roles.
    pub(super) fn roles(&self) -> usize {
        self.0.len()
    }

    /// Adds each role's best goal in every lane of `finished` to the
    /// totals' goal sums, and the lanes where it has none to its missing
    /// goals, reading the lanes where goal `g` holds as `holds(g)`:
    /// word-wise, a goal tested for 512 lanes at once, the lanes it holds in
    /// leaving the role's unscored ones (the totals are those of
    /// [`PlayoutTotals::finish_with`] lane by lane: each sum is of whole
    /// numbers, exact in any order).
    pub(super) fn score<'a>(
        &self,
        finished: &Lane,
        holds: impl Fn(usize) -> &'a Lane,
        totals: &mut PlayoutTotals,
    ) {
        for (role, goals) in self.0.iter().enumerate() {
            let mut unscored = *finished;
            for &(value, g) in goals {
                let scored = and(&unscored, holds(g));
                let count = lane_count(&scored);
                if count != 0 {
                    totals.goal_sums[role] += value as f64 * count as f64;
                    unscored = and(&unscored, &not(&scored));
                }
            }
            totals.missing_goals[role] += lane_count(&unscored);
        }
    }
}

/// Bit-sliced counting with carry-save adders: an addend of weight 2^k waits
/// until a second one arrives, and the two go with plane `k` through one full
/// adder, whose carry moves on to weight 2^(k+1). Counting `n` one-bit addends
/// costs about 5 word operations each, against one operation per plane for a
/// ripple-carry increment.
struct CarrySave<const P: usize> {
    /// Bit `k` set: `addend[k]` waits at weight 2^k.
    waiting: u32,
    addend: OnLines<[Lane; P]>,
}

impl<const P: usize> CarrySave<P> {
    fn new() -> Self {
        CarrySave {
            waiting: 0,
            addend: OnLines([NO_LANES; P]),
        }
    }

    /// Adds a one-bit-per-lane number to the counts in `planes`.
    #[inline(always)]
    fn add(&mut self, planes: &mut [Lane; P], bit: Lane) {
        let mut x = bit;
        for (k, plane) in planes.iter_mut().enumerate() {
            if self.waiting & (1 << k) == 0 {
                self.waiting |= 1 << k;
                self.addend.0[k] = x;
                return;
            }
            self.waiting &= !(1 << k);
            let y = self.addend.0[k];
            let partial = xor(plane, &y);
            let carry = or(&and(plane, &y), &and(&partial, &x));
            *plane = xor(&partial, &x);
            x = carry;
        }
    }

    /// Adds every waiting addend to `planes` (a ripple-carry increment each).
    #[inline(always)]
    fn flush(&mut self, planes: &mut [Lane; P]) {
        while self.waiting != 0 {
            let k = self.waiting.trailing_zeros() as usize;
            self.waiting &= self.waiting - 1;
            let mut carry = self.addend.0[k];
            for plane in &mut planes[k..] {
                let next_carry = and(plane, &carry);
                *plane = xor(plane, &carry);
                carry = next_carry;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::DEFAULT_MAX_DEPTH;
    use crate::evaluator::TURNS;

    /// Every vector width the CPU has, and more planes than the moves need,
    /// make the same choices: lanes stepped each way stay equal to lanes stepped
    /// as `step` does (the fewest planes, in the widest registers).
    #[test]
    fn widths_and_planes_choose_the_same() {
        type Stepper = Box<dyn Fn(&mut LanePlayouts)>;
        let game = crate::load(TURNS, &crate::LoadConfig::default())
            .expect("the test game loads")
            .game;
        let mut ways: Vec<(&str, Stepper)> = vec![
            ("128-bit, 32 planes", Box::new(|l| l.step_lanes::<128>(32))),
            ("128-bit", Box::new(|l| l.step_lanes::<128>(0))),
        ];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has AVX2.
                ways.push(("256-bit", Box::new(|l| unsafe { l.step_avx2() })));
            }
            if std::arch::is_x86_feature_detected!("avx512f") {
                // SAFETY: the CPU has AVX-512F.
                ways.push(("512-bit", Box::new(|l| unsafe { l.step_avx512() })));
            }
        }
        let mut fewest = LanePlayouts::new(Arc::clone(&game), game.initial(), (7, 0), DEFAULT_MAX_DEPTH);
        let mut others: Vec<LanePlayouts> = ways
            .iter()
            .map(|_| LanePlayouts::new(Arc::clone(&game), game.initial(), (7, 0), DEFAULT_MAX_DEPTH))
            .collect();
        for step in 0..40 {
            fewest.step();
            for ((way, stepper), other) in ways.iter().zip(&mut others) {
                stepper(other);
                assert!(*fewest.values == *other.values, "{way}, step {step}");
                assert_eq!(fewest.moved, other.moved, "{way}, step {step}");
                assert_eq!(fewest.streams, other.streams, "{way}, step {step}");
            }
        }
        for ((way, _), other) in ways.iter().zip(&others) {
            assert_eq!(fewest.totals, other.totals, "{way}");
        }
        assert!(fewest.totals.playouts > 0, "no playout finished");
    }

    /// The word-wise totals of finished playouts are those of
    /// [`PlayoutTotals::finish_with`] lane by lane, in a game where a role
    /// may derive several goal values (the highest counts) or none.
    #[test]
    fn finished_lanes_score_their_best_goals() {
        let rules = TURNS.replace(
            "(goal a 50) (goal b 50)",
            "(<= (goal a 100) (true (cell 1 a))) (<= (goal a 50) (true (cell 2 a)))
             (<= (goal a 0) (true (cell 3 b))) (<= (goal b 30) (true (cell 5 b)))",
        );
        let game = crate::load(&rules, &crate::LoadConfig::default())
            .expect("the test game loads")
            .game;
        let mut lanes = LanePlayouts::new(Arc::clone(&game), game.initial(), (3, 0), DEFAULT_MAX_DEPTH);
        let (mut scored, mut missing) = (0, 0);
        for step in 0..40 {
            lanes.evaluator.load_states(&mut lanes.values);
            let terminal = lanes.values[lanes.net.terminal_slot() as usize];
            let mut expected = lanes.totals.clone();
            for_each_lane(&terminal, |lane| {
                let mut best = vec![None; game.roles().len()];
                for (&(role, value), &slot) in game.goals().iter().zip(lanes.net.goal_slots()) {
                    if (lanes.values[slot as usize][lane / 64] >> (lane % 64)) & 1 != 0 {
                        best[role] = Some(best[role].map_or(value, |b: i64| b.max(value)));
                    }
                }
                scored += best.iter().flatten().count();
                missing += best.iter().filter(|b| b.is_none()).count();
                expected.finish_with(lanes.steps - lanes.starts[lane], best);
            });
            lanes.finish_playouts(&terminal);
            assert_eq!(lanes.totals, expected, "step {step}");
            lanes.step();
        }
        assert!(scored > 0 && missing > 0, "scored {scored}, missing {missing}");
    }
}
