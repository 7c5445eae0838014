//! Element types and reduction operators: the MPI datatypes a schedule can carry (i32, i64,
//! f32, f64), how two elements combine, and the deterministic inputs of `--check`.

use mpi::collective::SystemOperation;
use mpi::datatype::Equivalence;

/// The reduction operator of the schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Sum,
    Prod,
    Min,
    Max,
}

impl Op {
    pub fn name(self) -> &'static str {
        match self {
            Op::Sum => "sum",
            Op::Prod => "prod",
            Op::Min => "min",
            Op::Max => "max",
        }
    }

    /// The MPI library's predefined operator.
    pub fn system(self) -> SystemOperation {
        match self {
            Op::Sum => SystemOperation::sum(),
            Op::Prod => SystemOperation::product(),
            Op::Min => SystemOperation::min(),
            Op::Max => SystemOperation::max(),
        }
    }
}

/// An element type the executor and the check handle.
pub trait Elem: Equivalence + Copy + Default + PartialEq + std::fmt::Display + 'static {
    /// True for floating-point types, whose sums and products depend on the order.
    const FLOAT: bool;
    /// Machine epsilon (0 for integers).
    const EPSILON: f64;
    /// `a ⊕ b`. Integers wrap on overflow, as the MPI library's C operators do.
    fn combine(op: Op, a: Self, b: Self) -> Self;
    /// A deterministic input element from 64 random bits, chosen so that `op` stays in range:
    /// never zero (so min and max do not meet signed zeros), near one for products.
    fn input(op: Op, bits: u64) -> Self;
    /// The absolute value (for the error bound of floating-point sums).
    fn abs(self) -> Self;
    /// The bit pattern (for bitwise comparison across ranks).
    fn bits(self) -> u64;
    fn to_f64(self) -> f64;
}

macro_rules! int_elem {
    ($t:ty) => {
        impl Elem for $t {
            const FLOAT: bool = false;
            const EPSILON: f64 = 0.0;
            fn combine(op: Op, a: Self, b: Self) -> Self {
                match op {
                    Op::Sum => a.wrapping_add(b),
                    Op::Prod => a.wrapping_mul(b),
                    Op::Min => a.min(b),
                    Op::Max => a.max(b),
                }
            }
            fn input(op: Op, bits: u64) -> Self {
                match op {
                    // 1, 2 or -1: products of up to 30 ranks stay in range.
                    Op::Prod => [1, 2, -1, 1][(bits % 4) as usize],
                    _ => match (bits % 2001) as Self - 1000 {
                        0 => 1001,
                        x => x,
                    },
                }
            }
            fn abs(self) -> Self {
                self.wrapping_abs()
            }
            fn bits(self) -> u64 {
                self as u64
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
        }
    };
}

macro_rules! float_elem {
    ($t:ty) => {
        impl Elem for $t {
            const FLOAT: bool = true;
            const EPSILON: f64 = <$t>::EPSILON as f64;
            fn combine(op: Op, a: Self, b: Self) -> Self {
                match op {
                    Op::Sum => a + b,
                    Op::Prod => a * b,
                    Op::Min => {
                        if b < a {
                            b
                        } else {
                            a
                        }
                    }
                    Op::Max => {
                        if b > a {
                            b
                        } else {
                            a
                        }
                    }
                }
            }
            fn input(op: Op, bits: u64) -> Self {
                // Uniform in [-0.5, 0.5) with a full mantissa, so the order of a sum matters.
                let x = (bits >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
                let x = if x == 0.0 { 0.25 } else { x };
                match op {
                    Op::Prod => (1.0 + x / 8.0) as $t,
                    _ => x as $t,
                }
            }
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            fn bits(self) -> u64 {
                self.to_bits() as u64
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
        }
    };
}

int_elem!(i32);
int_elem!(i64);
float_elem!(f32);
float_elem!(f64);

/// SplitMix64: the deterministic input of element `i` on rank `rank`.
pub fn mix(rank: usize, i: usize) -> u64 {
    let mut z = (((rank as u64) << 40) ^ i as u64).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
