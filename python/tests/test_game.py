"""The agent API on the built-in game and small games written here."""

import copy
import pickle
import threading

import pytest

import ggpnet

BUTTON = """
(role robot) (init off)
(<= (legal robot press) (true off))
(<= (next on) (does robot press))
(<= terminal (true on))
(<= (goal robot 100) (true on)) (<= (goal robot 0) (true off))
"""


@pytest.fixture(scope="module")
def game():
    return ggpnet.Game.load(ggpnet.DEFAULT_GAME)


def test_roles_engine_and_settings(game):
    assert game.roles == ["red", "yellow"]
    assert game.role_index("yellow") == 1
    assert game.engine == "propnet"
    assert game.fallback_reason is None
    assert not game.is_gdl2 and game.random_role is None
    assert game.settings == {}
    assert game.rules == ggpnet.DEFAULT_GAME


def test_moves_print_and_parse_as_kif(game):
    start = game.initial_state()
    red = game.legal_moves(start, "red")
    assert [str(m) for m in red] == [f"(drop {c})" for c in range(1, 8)]
    assert game.parse_move(0, "(  drop   4 )") == red[3]
    assert game.move_to_kif(red[3]) == "(drop 4)"
    assert red[3].role == 0 and red[3].role_name == "red"
    assert game.legal_moves(start, 1) == [game.parse_move("yellow", "wait")]


def test_next_state_goals_and_terminal(game):
    start = game.initial_state()
    after = game.next_state(start, ["(drop 4)", "wait"])
    assert "(disc 4 1 red)" in after.facts()
    assert str(after) == " ".join(after.facts())
    assert not game.is_terminal(after)
    assert game.goals(after) == [50, 50]
    assert game.state_from_kif(after.facts()) == after
    assert game.state_to_kif(after) == after.facts()


def test_states_and_moves_hash_compare_and_sort(game):
    start = game.initial_state()
    a = game.next_state(start, ["(drop 1)", "wait"])
    b = game.next_state(start, ["(drop 2)", "wait"])
    again = game.next_state(start, ["(drop 1)", "wait"])
    assert a == again and hash(a) == hash(again) and a != b
    assert len({a, b, again}) == 2
    assert sorted([b, a]) == sorted([a, b])
    assert (a < b) == (a.facts() < b.facts())
    moves = game.legal_moves(start, 0)
    assert sorted(reversed(moves)) == sorted(moves)
    assert len(set(moves + moves)) == 7
    assert copy.copy(a) is a and copy.deepcopy(a) is a and copy.deepcopy(game) is game


def test_pickling_rebuilds_the_game_with_its_states_and_moves(game):
    start = game.initial_state()
    move = game.parse_move(0, "(drop 3)")
    after = game.next_state(start, [move, "wait"])
    game2, after2, move2 = pickle.loads(pickle.dumps((game, after, move)))
    assert game2 is not game and game2.roles == game.roles
    assert after2.game is game2 and move2.game is game2
    assert after2.facts() == after.facts()
    assert str(move2) == "(drop 3)"
    assert game2.next_state(game2.initial_state(), [move2, "wait"]) == after2
    limited = ggpnet.Game.load(ggpnet.DEFAULT_GAME, max_playout_depth=30, evaluator="sweep")
    assert pickle.loads(pickle.dumps(limited)).settings == {"evaluator": "sweep", "max_playout_depth": 30}


def test_a_state_of_another_game_is_refused(game):
    other = ggpnet.Game.load(ggpnet.DEFAULT_GAME)
    with pytest.raises(ggpnet.ForeignStateError):
        other.is_terminal(game.initial_state())
    with pytest.raises(ggpnet.ForeignMoveError):
        other.next_state(other.initial_state(), [game.parse_move(0, "(drop 1)"), "wait"])
    assert game.initial_state() != other.initial_state()


def test_illegal_and_unknown_moves_raise_by_kind(game):
    start = game.initial_state()
    with pytest.raises(ggpnet.IllegalMoveError) as illegal:
        game.next_state(start, ["wait", "wait"])
    assert illegal.value.role == "red" and illegal.value.move == "wait"
    assert isinstance(illegal.value, ValueError)
    with pytest.raises(ggpnet.UnknownMoveError) as unknown:
        game.parse_move("red", "(drop 9)")
    assert unknown.value.move == "(drop 9)"
    with pytest.raises(ggpnet.RefusedError) as short:
        game.next_state(start, ["(drop 1)"])
    assert short.value.kind == "joint_length"
    with pytest.raises(ggpnet.NoSuchRoleError):
        game.legal_moves(start, 2)
    with pytest.raises(ggpnet.NoSuchRoleError):
        game.legal_moves(start, "blue")
    with pytest.raises(ggpnet.UnknownFactError):
        game.state_from_kif(["(no such fact)"])
    error = pickle.loads(pickle.dumps(illegal.value))
    assert type(error) is ggpnet.IllegalMoveError and error.move == "wait"


def test_load_errors_have_kinds_and_places():
    with pytest.raises(ggpnet.ParseError) as parse:
        ggpnet.Game.load("(role r)\n(init (a)")
    assert (parse.value.line, parse.value.column) == (2, 1)
    assert isinstance(parse.value, ggpnet.LoadError)
    with pytest.raises(ggpnet.GdlError) as gdl:
        ggpnet.Game.load("(role r) (init a) (<= (legal r ?x) (true a)) (<= terminal (true a)) (goal r 100)")
    assert gdl.value.kind == "unsafe" and gdl.value.line == 1
    with pytest.raises(ggpnet.LimitError) as limit:
        ggpnet.Game.load(ggpnet.DEFAULT_GAME, engine="propnet", max_ground_rules=10)
    assert (limit.value.limit, limit.value.value) == ("max_ground_rules", 10)
    with pytest.raises(ggpnet.SettingError) as setting:
        ggpnet.Game.load(ggpnet.DEFAULT_GAME, max_playout_depth=0)
    assert setting.value.setting == "max_playout_depth"
    with pytest.raises(ggpnet.SettingError):
        ggpnet.Game.load(ggpnet.DEFAULT_GAME, engine="quantum")
    with pytest.raises(TypeError):
        ggpnet.Game.load(ggpnet.DEFAULT_GAME, no_such_setting=1)
    with pytest.raises(FileNotFoundError):
        ggpnet.Game.load("no/such/file.kif")


def test_past_a_limit_the_interpreter_runs_the_game(game):
    slow = ggpnet.Game.load(ggpnet.DEFAULT_GAME, max_ground_rules=10)
    assert slow.engine == "interpreter" and "ground rules" in slow.fallback_reason
    start = slow.initial_state()
    assert [str(m) for m in slow.legal_moves(start, 0)] == [str(m) for m in game.legal_moves(game.initial_state(), 0)]
    after = slow.next_state(start, ["(drop 4)", "wait"])
    assert after.facts() == game.next_state(game.initial_state(), ["(drop 4)", "wait"]).facts()
    report = slow.playouts(start, playouts=4, threads=2)
    assert report.engine == "interpreter" and report.playouts + report.abandoned == 4
    with pytest.raises(ggpnet.EngineError):
        slow.bases


def test_load_reads_paths(tmp_path, game):
    path = tmp_path / "button.kif"
    path.write_text(BUTTON)
    for source in (path, str(path)):
        button = ggpnet.Game.load(source)
        assert button.roles == ["robot"]
    start = button.initial_state()
    end = button.next_state(start, ["press"])
    assert button.is_terminal(end) and button.goals(end) == [100] and end.facts() == ["on"]


def test_joint_moves_successors_and_random_draws(game):
    start = game.initial_state()
    joints = game.legal_joint_moves(start)
    assert [[str(m) for m in j] for j in joints] == [[f"(drop {c})", "wait"] for c in range(1, 8)]
    successors = game.successors(start)
    assert [j for j, _ in successors] == joints
    for joint, after in successors:
        assert game.next_state(start, joint) == after
    one = game.random_joint_move(start, rng=7)
    assert one == game.random_joint_move(start, rng=ggpnet.Stream(7))
    assert one in joints
    fixed = game.random_joint_move(start, fixed=["(drop 2)", None])
    assert str(fixed[0]) == "(drop 2)"
    assert game.random_move(start, "yellow") == game.parse_move(1, "wait")
    stream = ggpnet.Stream(3, 1)
    assert 0 <= stream.draw(10) < 10


def test_perft_from_successors_matches_the_rust_count(game):
    def paths(state, depth):
        if depth == 0 or game.is_terminal(state):
            return 0
        successors = game.successors(state)
        if depth == 1:
            return len(successors)
        return sum(paths(after, depth - 1) for _, after in successors)

    counts = game.perft(3)
    assert counts == [paths(game.initial_state(), d) for d in (1, 2, 3)]
    assert counts == game.perft(3, evaluator="sweep")


def test_perft_from_a_state_sums_over_the_first_moves(game):
    start = game.initial_state()
    sums = [0, 0]
    for _, after in game.successors(start):
        for d, n in enumerate(game.perft(2, state=after)):
            sums[d] += n
    assert sums == game.perft(3)[1:]
    assert game.perft(3, state=start) == game.perft(3)
    other = ggpnet.Game.load(ggpnet.DEFAULT_GAME)
    with pytest.raises(ggpnet.ForeignStateError):
        other.perft(1, state=start)


def test_a_playout_ends_and_playouts_add_up(game):
    ended = game.playout(game.initial_state(), rng=1)
    assert ended.terminal and game.is_terminal(ended.state)
    assert ended.goals == game.goals(ended.state)
    report = game.playouts(playouts=300, threads=2, seed=5)
    assert report.playouts + report.abandoned >= 300
    assert report.threads == 2 and report.transitions > 0
    assert sum(report.avg_goals) == pytest.approx(100.0)
    given = [report.playouts - missing for missing in report.missing_goals]
    assert [s / n for s, n in zip(report.goal_sums, given)] == report.avg_goals
    with pytest.raises(TypeError):
        game.playouts()
    with pytest.raises(ggpnet.SettingError):
        game.playouts(seconds=0.1, threads=0)


def test_playouts_release_the_gil(game):
    game.calibrate()
    ticks = 0
    worker = threading.Thread(target=lambda: game.playouts(seconds=0.5, threads=1))
    worker.start()
    while worker.is_alive():
        ticks += 1
    worker.join()
    print(f"the main thread counted {ticks} times while playouts ran")
    assert ticks > 1000


def test_threads_share_a_game(game):
    results = []

    def walk(seed):
        state = game.initial_state()
        while not game.is_terminal(state):
            state = game.next_state(state, game.random_joint_move(state, rng=seed))
        results.append(game.goals(state))

    workers = [threading.Thread(target=walk, args=(s,)) for s in range(8)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert len(results) == 8 and all(sum(g) == 100 for g in results)
