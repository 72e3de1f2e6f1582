//! `ggpnet._ggpnet`, the extension module of the Python package `ggpnet`
//! (`python/ggpnet/__init__.py` re-exports it): the agent API of the
//! `ggpnet` crate in Python's idioms, a batched environment for learning
//! with numpy arrays, and real-time GDL games. The exceptions are classes of
//! `ggpnet/errors.py`; the type stubs are `ggpnet/_ggpnet.pyi`.

mod batch;
mod env;
mod errors;
mod game;
mod playouts;
mod realtime;
mod settings;
mod source;
mod stream;
mod values;

use pyo3::prelude::*;

/// The module: its classes, the functions pickling rebuilds values with,
/// and the constants of the Rust API.
#[pymodule]
fn _ggpnet(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<game::Game>()?;
    m.add_class::<values::State>()?;
    m.add_class::<values::Move>()?;
    m.add_class::<stream::PyStream>()?;
    m.add_class::<playouts::PlayoutReport>()?;
    m.add_class::<playouts::Playout>()?;
    m.add_class::<env::VectorEnv>()?;
    m.add_class::<realtime::RtGame>()?;
    m.add_class::<realtime::RtState>()?;
    m.add_function(wrap_pyfunction!(game::_rebuild_game, m)?)?;
    m.add_function(wrap_pyfunction!(game::_restore_state, m)?)?;
    m.add_function(wrap_pyfunction!(game::_restore_move, m)?)?;
    m.add_function(wrap_pyfunction!(realtime::_rebuild_rt_game, m)?)?;
    m.add("DEFAULT_GAME", ggpnet::DEFAULT_GAME)?;
    m.add("MAX_THREADS", ggpnet::MAX_THREADS)?;
    m.add("MAX_JOINT_MOVES", ggpnet::MAX_JOINT_MOVES)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
