"""The Python API against the shared corpus's reference traces: every step of
a recorded playout (state, legal moves, next state, goals, GDL-II percepts)
and perft counted through `successors`; SBG and rtGDL games of the repository."""

import json

import pytest

import ggpnet

from conftest import REPO

GAMES = ["connectFour", "breakthrough", "ticTacToe"]
GDL2_GAMES = ["montyhall", "meier"]


def read_trace(path):
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    header, playouts, perft = lines[0], lines[1:-1], lines[-1].get("perft", {})
    return header, playouts, perft


def replay(game, playout, percepts):
    """Replays a recorded playout step by step; returns the steps checked."""
    state = game.initial_state()
    for step in playout["steps"]:
        assert state.facts() == step["state"]
        for role, legal in enumerate(step["legal"]):
            assert sorted(str(m) for m in game.legal_moves(state, role)) == legal
        assert game.goal_values(state) == step["goals"]
        joint = [game.parse_move(role, text) for role, text in enumerate(step["joint"])]
        if percepts:
            assert game.percepts(state, joint) == step["sees"]
        state = game.next_state(state, joint)
    final = playout.get("final")
    if final is not None:
        assert state.facts() == final["state"]
        assert game.is_terminal(state)
        expected = [g if isinstance(g, int) else (max(g) if g else None) for g in final["goals"]]
        assert game.goals(state) == expected
    return len(playout["steps"])


def perft_by_successors(game, depth):
    counts = [0] * depth
    frontier = [game.initial_state()]
    for d in range(depth):
        following = []
        for state in frontier:
            if game.is_terminal(state):
                continue
            successors = game.successors(state)
            counts[d] += len(successors)
            following.extend(after for _, after in successors)
        frontier = following
    return counts


def find_game(corpus, folder, name):
    for suffix in (".kif", ".gdl"):
        path = corpus / folder / (name + suffix)
        if path.exists():
            return path
    pytest.fail(f"{name} is not in {folder}")


@pytest.mark.parametrize("name", GAMES)
def test_a_recorded_playout_and_perft(corpus, name):
    game = ggpnet.Game.load(corpus / "games" / f"{name}.kif")
    header, playouts, perft = read_trace(corpus / "traces" / f"{name}.jsonl")
    assert game.roles == header["roles"]
    steps = replay(game, playouts[0], percepts=False)
    depth = min(3, len(perft))
    expected = [perft[str(d)] for d in range(1, depth + 1)]
    assert perft_by_successors(game, depth) == expected
    assert game.perft(depth) == expected
    print(f"{name}: {steps} steps replayed, perft {expected}")


@pytest.mark.parametrize("name", GDL2_GAMES)
def test_gdl2_percepts_follow_the_trace(corpus, name):
    game = ggpnet.Game.load(find_game(corpus, "games-gdl2", name))
    assert game.is_gdl2
    _, playouts, _ = read_trace(corpus / "traces-gdl2" / f"{name}.jsonl")
    replay(game, playouts[0], percepts=True)
    if game.random_role is not None:
        env = ggpnet.VectorEnv(game, 8, seed=3)
        actions = env.sample_actions()
        actions[:, game.random_role] = 0  # ignored: random always draws
        env.step(actions)


def test_sbg_games_load_and_play():
    path = REPO / "games" / "sbg" / "breakthrough.sbg"
    game = ggpnet.Game.load(path)
    same = ggpnet.Game.load(path.read_text(), format="sbg")
    assert game.roles == same.roles and len(game.roles) == 2
    assert game.playout(game.initial_state(), rng=2).terminal
    with pytest.raises(ggpnet.ParseError) as error:
        ggpnet.Game.load("<<not a game>>", format="sbg")
    assert error.value.line == 1


def test_rtgdl_games_load_update_and_play():
    text = """(role r) (init 1.0 (appear cat))
        (<= (next 3.0 (gone ?c)) (expired (appear ?c)))
        (<= (next ?t (gone ?c)) (true ?t (gone ?c)))
        (<= (legal r (catch ?c)) (true ?t (appear ?c)))
        (<= (next infinity caught) (does r (catch ?c)))
        (<= terminal (true infinity caught)) (goal r 100)"""
    with pytest.raises(ggpnet.RealTimeGameError):
        ggpnet.Game.load(text)
    game = ggpnet.RtGame.load(text)
    assert game.roles == ["r"]
    start = game.initial_state()
    assert game.pairs(start) == [("1", "(appear cat)")]
    assert game.next_expiry(start) == "1"
    assert game.legal_moves(start, "r") == ["(catch cat)"]
    caught = game.update(start, "0.5", ["(catch cat)"])
    assert game.is_terminal(caught) and game.goals(caught) == [100]
    expired = game.update(start, 1.0, [None])
    assert not game.is_terminal(expired) and expired != start
    with pytest.raises(ggpnet.RefusedError):
        game.update(start, "2", [None])
    report = game.playouts(playouts=20, threads=2)
    assert report["playouts"] == 20
    for path in sorted((REPO / "games" / "rtgdl").glob("*.kif")):
        rt = ggpnet.RtGame.load(path)
        totals = rt.playouts(playouts=4, threads=1, max_events=200)
        print(f"{path.name}: {rt.engine}, {totals['events']} events in 4 playouts")
    import pickle

    assert pickle.loads(pickle.dumps(game)).roles == ["r"]
