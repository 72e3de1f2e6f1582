"""ggpnet.VectorEnv against Game.next_state stepping the same actions."""

import numpy as np
import pytest

import ggpnet


@pytest.fixture(scope="module")
def game():
    return ggpnet.Game.load(ggpnet.DEFAULT_GAME)


def expected_rows(game, state):
    """The observation and mask rows of `state`, from the agent API."""
    bases = {fact: i for i, fact in enumerate(game.bases)}
    obs = np.zeros(len(bases), dtype=np.uint8)
    for fact in state.facts():
        obs[bases[fact]] = 1
    actions = [game.actions(r) for r in range(len(game.roles))]
    mask = np.zeros((len(game.roles), max(len(a) for a in actions)), dtype=bool)
    if not game.is_terminal(state):
        for role, moves in enumerate(actions):
            legal = set(game.legal_moves(state, role))
            for a, move in enumerate(moves):
                mask[role, a] = move in legal
    return obs, mask


def check_against_next_state(game, env, steps):
    """Steps `env` with sampled actions, checking each lane against the agent API."""
    actions_of = [game.actions(r) for r in range(len(game.roles))]
    start = game.initial_state()
    ended = 0
    for _ in range(steps):
        before = [env.state(i) for i in range(env.num_envs)]
        actions = env.sample_actions()
        obs, rewards, terminated, truncated = env.step(actions)
        for i, state in enumerate(before):
            joint = [actions_of[r][a] for r, a in enumerate(actions[i])]
            after = game.next_state(state, joint)
            if terminated[i]:
                ended += 1
                assert game.is_terminal(after)
                assert list(rewards[i]) == [g or 0 for g in game.goals(after)]
                after = start  # auto-reset
            else:
                assert not truncated[i] and not rewards[i].any()
            assert env.state(i) == after
            want_obs, want_mask = expected_rows(game, after)
            assert np.array_equal(obs[i], want_obs)
            assert np.array_equal(env.legal_mask[i], want_mask)
    return ended


@pytest.mark.parametrize("evaluator", ["sweep", "differential", "lanes"])
def test_steps_match_next_state(game, evaluator):
    env = ggpnet.VectorEnv(game, 24, seed=4, threads=2, evaluator=evaluator)
    assert env.observations.shape == (24, len(game.bases))
    assert env.legal_mask.shape == (24, 2, env.num_actions)
    ended = check_against_next_state(game, env, 60)
    print(f"{ended} episodes ended in 60 steps of 24 lanes")
    assert ended > 0


@pytest.mark.parametrize("evaluator", ["sweep", "lanes"])
def test_a_corpus_game_steps_as_next_state(corpus, evaluator):
    game = ggpnet.Game.load(corpus / "games" / "breakthrough.kif")
    env = ggpnet.VectorEnv(game, 6, seed=1, threads=2, evaluator=evaluator)
    assert env.evaluator == evaluator
    check_against_next_state(game, env, 40)


def run_arrays(env, steps, sampled):
    """Copies of every array after each of `steps` steps of random actions."""
    seen = []
    random = np.full((env.num_envs, len(env.game.roles)), -1)
    for step in range(steps):
        env.step(env.sample_actions() if sampled else random)
        seen.append(tuple(a.copy() for a in (env.observations, env.legal_mask, env.rewards, env.terminated, env.truncated)))
        if step == steps // 2:
            env.reset(lanes=[0, env.num_envs - 1])
            seen.append((env.observations.copy(), env.legal_mask.copy()))
    return seen


@pytest.mark.parametrize("evaluator", ["lanes", "sweep"])
def test_arrays_start_on_a_cache_line_and_stay_in_place(game, evaluator):
    """The observations and the mask start on a 64-byte line (the lanes engine
    writes them 64 flags a store), are C-contiguous and writable, and each
    step writes the same arrays."""
    env = ggpnet.VectorEnv(game, 5, seed=3, evaluator=evaluator)
    obs, mask = env.observations, env.legal_mask
    for array, dtype in ((obs, np.uint8), (mask, np.bool_)):
        assert array.ctypes.data % 64 == 0
        assert array.dtype == dtype and array.flags["C_CONTIGUOUS"] and array.flags["WRITEABLE"]
    assert obs.shape == (5, len(game.bases)) and mask.shape[:2] == (5, len(game.roles))
    assert env.step(env.sample_actions())[0] is not None
    assert env.observations.ctypes.data == obs.ctypes.data
    assert env.legal_mask.ctypes.data == mask.ctypes.data
    for i in range(5):
        expected_obs, expected_mask = expected_rows(game, env.state(i))
        assert (obs[i] == expected_obs).all() and (mask[i] == expected_mask).all()


@pytest.mark.parametrize("auto_reset", [True, False])
def test_lanes_and_scalar_machines_give_the_same_games(game, auto_reset):
    """600 lanes are two blocks of 300 on the lanes engine; with or without
    auto-reset, step limits and resets, every array equals the scalar one."""
    def run(evaluator, sampled):
        env = ggpnet.VectorEnv(game, 600, seed=5, evaluator=evaluator, auto_reset=auto_reset, max_steps=30)
        assert env.evaluator == evaluator
        return run_arrays(env, 50, sampled)

    for sampled in (False, True):
        lanes, sweep = run("lanes", sampled), run("sweep", sampled)
        for step, (a, b) in enumerate(zip(lanes, sweep)):
            assert all(np.array_equal(x, y) for x, y in zip(a, b)), f"step {step}"


def test_the_engine_is_chosen_by_size(game):
    assert ggpnet.VectorEnv(game, 4).evaluator == "sweep"
    assert ggpnet.VectorEnv(game, 4096).evaluator == "lanes"
    assert "lanes" in repr(ggpnet.VectorEnv(game, 512))


def test_arrays_are_shared_not_copied(game):
    env = ggpnet.VectorEnv(game, 8)
    obs, rewards, terminated, truncated = env.step(env.sample_actions())
    again = env.step(env.sample_actions())
    assert obs is again[0] or np.shares_memory(obs, again[0])
    assert np.shares_memory(obs, env.observations)
    assert np.shares_memory(rewards, env.rewards)
    assert np.shares_memory(terminated, env.terminated) and np.shares_memory(truncated, env.truncated)
    assert obs.dtype == np.uint8 and rewards.dtype == np.float32 and env.legal_mask.dtype == np.bool_


@pytest.mark.parametrize("n", [40, 1100])
def test_seeded_runs_repeat_on_any_thread_count(game, n):
    def run(threads):
        env = ggpnet.VectorEnv(game, n, seed=9, threads=threads)
        random = np.full((n, 2), -1)
        seen = []
        for _ in range(30):
            obs, rewards, terminated, _ = env.step(random)
            seen.append((obs.copy(), rewards.copy(), terminated.copy()))
        return seen

    one = run(1)
    for threads in (2, 3):
        other = run(threads)
        assert all(all(np.array_equal(a, b) for a, b in zip(x, y)) for x, y in zip(one, other))


@pytest.mark.parametrize("evaluator", ["sweep", "lanes"])
def test_without_auto_reset_an_ended_lane_waits(game, evaluator):
    env = ggpnet.VectorEnv(game, 4, auto_reset=False, seed=2, evaluator=evaluator)
    for _ in range(200):
        env.step(env.sample_actions())
        if env.terminated.all() or (env.terminated | env.truncated).all():
            break
    done = env.terminated | env.truncated
    assert done.all()
    final = [env.state(i) for i in range(4)]
    assert not env.legal_mask.any()
    assert (env.sample_actions() == -1).all()
    env.step(np.zeros((4, 2), dtype=np.int32))  # ignored: every lane ended
    assert [env.state(i) for i in range(4)] == final and not env.rewards.any()
    assert (env.terminated | env.truncated).all()
    env.reset(lanes=[1])
    assert env.state(1) == game.initial_state() and env.legal_mask[1].any()
    assert not env.terminated[1] and env.state(0) == final[0]


@pytest.mark.parametrize("evaluator", ["sweep", "lanes"])
def test_max_steps_truncates(game, evaluator):
    env = ggpnet.VectorEnv(game, 3, max_steps=2, auto_reset=False, evaluator=evaluator)
    env.step(env.sample_actions())
    assert not env.truncated.any()
    env.step(env.sample_actions())
    assert env.truncated.all() and not env.terminated.any()


@pytest.mark.parametrize("evaluator", ["sweep", "lanes"])
def test_illegal_actions_are_refused_before_any_lane_moves(game, evaluator):
    env = ggpnet.VectorEnv(game, 3, evaluator=evaluator)
    actions = env.sample_actions()
    wait = [str(m) for m in env.actions(0)].index("wait")
    actions[2, 0] = wait  # red may not wait in the initial state
    env.legal_mask[2, 0, wait] = True  # writing the mask does not make it legal
    with pytest.raises(ggpnet.IllegalMoveError) as error:
        env.step(actions)
    e = error.value
    assert (e.lane, e.role, e.action, e.move) == (2, "red", wait, "wait")
    assert all(env.state(i) == game.initial_state() for i in range(3))
    with pytest.raises(ggpnet.IllegalMoveError):
        env.step(np.full((3, 2), 99))
    with pytest.raises(ValueError):
        env.step(np.zeros((2, 2)))


@pytest.mark.parametrize("evaluator", ["sweep", "lanes"])
def test_states_can_be_set_and_read(game, evaluator):
    env = ggpnet.VectorEnv(game, 2, evaluator=evaluator)
    state = game.next_state(game.initial_state(), ["(drop 5)", "wait"])
    env.set_state(1, state)
    assert env.state(1) == state and env.state(0) == game.initial_state()
    obs, mask = expected_rows(game, state)
    assert np.array_equal(env.observations[1], obs) and np.array_equal(env.legal_mask[1], mask)
    with pytest.raises(IndexError):
        env.state(2)
    other = ggpnet.Game.load(ggpnet.DEFAULT_GAME)
    with pytest.raises(ggpnet.ForeignStateError):
        env.set_state(0, other.initial_state())


def test_the_interpreter_has_no_vector_env(game):
    slow = ggpnet.Game.load(ggpnet.DEFAULT_GAME, engine="interpreter")
    with pytest.raises(ggpnet.EngineError):
        ggpnet.VectorEnv(slow, 2)
    with pytest.raises(ValueError):
        ggpnet.VectorEnv(game, 0)


# Role b has no legal move once a has moved, and the game never ends (a game
# whose initial state is like that does not load).
STUCK_AFTER_ONE_STEP = """
(role a) (role b) (init (control a))
(<= (legal a go) (true (control a))) (<= (legal b noop) (true (control a)))
(<= (next (control b)) (does a go))
(<= terminal (true done)) (goal a 0) (goal b 0)
"""


@pytest.mark.parametrize("evaluator", ["sweep", "lanes"])
@pytest.mark.parametrize("auto_reset", [True, False])
def test_a_lane_without_a_legal_move_is_truncated(evaluator, auto_reset):
    game = ggpnet.Game.load(STUCK_AFTER_ONE_STEP)
    env = ggpnet.VectorEnv(game, 3, evaluator=evaluator, auto_reset=auto_reset)
    stuck = game.next_state(game.initial_state(), ["go", "noop"])
    env.set_state(2, stuck)
    for _ in range(3):
        env.step(env.sample_actions())
        assert env.truncated.all() and not env.terminated.any()
        env.step(np.full((3, 2), -1))
        assert env.truncated.all() and not env.terminated.any()
