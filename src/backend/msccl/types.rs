//! The MSCCL XML as data: [`Algo`] (the `<algo>` root) with its [`Gpu`]s, thread blocks
//! ([`Tb`]) and [`Step`]s, with every attribute the current executor reads.

/// The protocol a thread block runs: the runtime's ([`crate::net::gpu`], whose costs the
/// flow model charges), spelled in the XML as [`Proto::name`] gives it.
pub use crate::net::gpu::Proto;

/// A buffer as the XML names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MBuf {
    I,
    O,
    S,
}

impl MBuf {
    pub fn name(self) -> &'static str {
        match self {
            MBuf::I => "i",
            MBuf::O => "o",
            MBuf::S => "s",
        }
    }

    pub fn parse(s: &str) -> Option<MBuf> {
        match s {
            "i" => Some(MBuf::I),
            "o" => Some(MBuf::O),
            "s" => Some(MBuf::S),
            _ => None,
        }
    }
}

/// Step types of the current executor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepType {
    Send,
    Recv,
    RecvCopySend,
    RecvReduceSend,
    RecvReduceCopy,
    RecvReduceCopySend,
    Copy,
    Reduce,
    Nop,
}

impl StepType {
    pub const ALL: [StepType; 9] = [
        StepType::Send,
        StepType::Recv,
        StepType::RecvCopySend,
        StepType::RecvReduceSend,
        StepType::RecvReduceCopy,
        StepType::RecvReduceCopySend,
        StepType::Copy,
        StepType::Reduce,
        StepType::Nop,
    ];

    pub fn name(self) -> &'static str {
        match self {
            StepType::Send => "s",
            StepType::Recv => "r",
            StepType::RecvCopySend => "rcs",
            StepType::RecvReduceSend => "rrs",
            StepType::RecvReduceCopy => "rrc",
            StepType::RecvReduceCopySend => "rrcs",
            StepType::Copy => "cpy",
            StepType::Reduce => "re",
            StepType::Nop => "nop",
        }
    }

    pub fn parse(s: &str) -> Option<StepType> {
        StepType::ALL.into_iter().find(|t| t.name() == s)
    }

    pub fn sends(self) -> bool {
        matches!(
            self,
            StepType::Send
                | StepType::RecvCopySend
                | StepType::RecvReduceSend
                | StepType::RecvReduceCopySend
        )
    }

    pub fn receives(self) -> bool {
        matches!(
            self,
            StepType::Recv
                | StepType::RecvCopySend
                | StepType::RecvReduceSend
                | StepType::RecvReduceCopy
                | StepType::RecvReduceCopySend
        )
    }

    /// Whether the executor's parser bounds-checks the source and the destination offset.
    pub fn checked(self) -> (bool, bool) {
        match self {
            StepType::Send | StepType::RecvReduceSend => (true, false),
            StepType::Recv | StepType::RecvCopySend => (false, true),
            StepType::RecvReduceCopySend | StepType::Copy | StepType::Reduce => (true, true),
            StepType::RecvReduceCopy | StepType::Nop => (false, false),
        }
    }
}

/// One `<step>`: all ten attributes (`s` is the position in its thread block).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub ty: StepType,
    pub src: MBuf,
    pub srcoff: i64,
    pub dst: MBuf,
    pub dstoff: i64,
    pub cnt: i64,
    pub depid: i64,
    pub deps: i64,
    pub hasdep: bool,
}

/// One `<tb>`: its id is its index in [`Gpu::tbs`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tb {
    pub send: i64,
    pub recv: i64,
    pub chan: i64,
    pub steps: Vec<Step>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gpu {
    pub id: i64,
    pub i_chunks: i64,
    pub o_chunks: i64,
    pub s_chunks: i64,
    pub tbs: Vec<Tb>,
}

/// The `<algo>` root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Algo {
    pub name: String,
    pub proto: Proto,
    pub nchannels: i64,
    pub nchunksperloop: i64,
    pub ngpus: i64,
    /// The `coll` attribute as written (`allreduce`, `allgather`, `reducescatter`, ...).
    pub coll: String,
    pub inplace: bool,
    pub outofplace: bool,
    pub min_bytes: i64,
    pub max_bytes: i64,
    pub gpus: Vec<Gpu>,
    /// The root of a broadcast or reduce, when known (the XML does not say it).
    pub root: Option<u32>,
}
