// rchain.rs: a known call chain in Rust, for stack and name tests of
// programs rustc links with rust-lld (its default): main -> outer ->
// Worker::middle -> inner_generic -> hot_leaf, hot_leaf burning CPU for
// the milliseconds given (default 300). Built by the tests:
//   rustc -C opt-level=2 -g -o rchain tests/progs/rchain.rs
use std::hint::black_box;
use std::time::{Duration, Instant};

struct Worker {
    k: u64,
}

#[inline(never)]
fn hot_leaf(x: u64) -> u64 {
    let mut a = x;
    for i in 0..200_000u64 {
        a = a.wrapping_mul(6364136223846793005).wrapping_add(black_box(i));
    }
    a
}

#[inline(never)]
fn inner_generic<T: Into<u64>>(t: T) -> u64 {
    black_box(hot_leaf(t.into())) ^ 1
}

impl Worker {
    #[inline(never)]
    fn middle(&self, x: u64) -> u64 {
        black_box(inner_generic(x + self.k)) ^ 2
    }
}

#[inline(never)]
fn outer(w: &Worker, n: u64) -> u64 {
    let mut s = 0;
    for i in 0..n {
        s ^= w.middle(i);
    }
    black_box(s) ^ 3
}

fn main() {
    let ms: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(300);
    let w = Worker { k: 3 };
    let end = Instant::now() + Duration::from_millis(ms);
    let mut s = 0;
    while Instant::now() < end {
        s ^= outer(&w, 10);
    }
    println!("{}", s);
}
