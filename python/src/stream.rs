//! `ggpnet.Stream`: the random streams every draw of ggpnet takes
//! (xoshiro256++, draws below a bound by Lemire's method), so that a Python
//! agent can make the same choices as the Rust drivers.

use ggpnet::Stream;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// A random stream: number `stream` under `seed`. Pass one as `rng` to the
/// game's random draws to make them reproducible.
#[pyclass(module = "ggpnet", name = "Stream")]
pub struct PyStream {
    /// The stream.
    pub(crate) stream: Stream,
}

#[pymethods]
impl PyStream {
    /// Stream number `stream` under `seed`.
    #[new]
    #[pyo3(signature = (seed = 0, stream = 0))]
    fn new(seed: u64, stream: u64) -> PyStream {
        PyStream {
            stream: Stream::new(seed, stream),
        }
    }

    /// A uniformly random number below `n` (at least 1); 0 without drawing when `n` is 1.
    fn draw(&mut self, n: usize) -> PyResult<usize> {
        if n == 0 {
            return Err(PyValueError::new_err("draw(n) needs n of at least 1"));
        }
        Ok(self.stream.draw(n))
    }

    /// The next 64 random bits.
    fn next_u64(&mut self) -> u64 {
        self.stream.next_u64()
    }
}
