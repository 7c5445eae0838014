//! The registry of diagnostic codes. Codes are stable and never reused: a retired code keeps its
//! number and its page in docs/errors/. Every code has a page `docs/errors/E0xxx.md`, shown by
//! `collc explain`.

use serde::{Serialize, Serializer};

macro_rules! codes {
    ($($name:ident = $num:literal, $title:literal;)*) => {
        /// A stable diagnostic code.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code { $($name,)* }

        impl Code {
            /// Every code, in numeric order.
            pub const ALL: &'static [Code] = &[$(Code::$name,)*];

            /// The number, as `E0001`.
            pub fn as_str(self) -> &'static str {
                match self { $(Code::$name => $num,)* }
            }

            /// A one-line description of the class of problem.
            pub fn title(self) -> &'static str {
                match self { $(Code::$name => $title,)* }
            }
        }
    };
}

codes! {
    Syntax = "E0001", "syntax error";
    InvalidToken = "E0002", "invalid character or malformed literal";
    UnknownName = "E0003", "unknown name";
    DuplicateName = "E0004", "duplicate definition";
    DimensionMismatch = "E0005", "mismatched units or dimensions";
    UnknownUnit = "E0006", "unknown unit";
    TypeMismatch = "E0007", "value of the wrong type";
    NonPositive = "E0008", "a size, bandwidth or count that must be positive is not";
    ImportNotFound = "E0009", "import not found";
    UndeclaredNode = "E0010", "link or reference to an undeclared node";
    NotComputeNode = "E0011", "participant is not a compute node";
    Unreachable = "E0012", "compute nodes cannot reach each other";
    AsymmetricBandwidth = "E0013", "asymmetric bandwidth where the schedule needs symmetry";
    StageProduct = "E0014", "stage factors do not multiply to the rank count";
    CollapseExpand = "E0015", "invalid collapse or expand stage";
    MergeMismatch = "E0016", "merge parameters do not fit the ranks";
    BadStage = "E0017", "malformed stage encoding";
    LimitExceeded = "E0018", "generator exceeds the node, link or iteration limit";
    MissingDeclaration = "E0019", "required declaration missing";
    BadProperty = "E0020", "unknown, duplicate or missing property";
    BadArguments = "E0021", "wrong arguments to a generator or function";
    Arithmetic = "E0022", "arithmetic error";
    Recursion = "E0023", "generator recursion too deep";
    BadValue = "E0024", "value not allowed here";
    DuplicateParticipant = "E0025", "participant listed twice";
    ImportCycle = "E0026", "import cycle";
    SizeNotDivisible = "E0027", "collective size is not a whole number of elements";
    BadRoot = "E0028", "missing or invalid root";
    Io = "E0029", "cannot read or write a file";
    TargetUnsupported = "E0030", "the target cannot express this schedule";
    IrSyntax = "E0031", "malformed IR text";
    IrInvalid = "E0032", "invalid IR operation";
    IrWrongResult = "E0033", "the program does not implement its collective";
    IrOrder = "E0034", "ranks combine contributions in different orders";
    IrDeadlock = "E0035", "the program deadlocks";
    IrRace = "E0036", "unordered conflicting accesses to a buffer slot";
    GoalSyntax = "E0037", "malformed GOAL text";
    GoalInvalid = "E0038", "GOAL schedule a LogGOPSim run would reject or hang on";
    LowerUnsupported = "E0039", "the schedule cannot be lowered for this collective";
    MscclLimit = "E0040", "the MSCCL XML exceeds a limit of the executor";
    MscclInvalid = "E0041", "MSCCL XML the executor would reject, mis-select or hang on";
    MpiUnsupported = "E0042", "the MPI target cannot run this program";
    ForestUnschedulable = "E0043", "no forest schedule fits this topology and collective";
    ForestFixedK = "E0044", "the fixed number of trees per rank cannot be scheduled";
    ForestChunksLose = "E0045", "too few pipelined chunks for the forest's trees (warning)";
    ProgramTooLarge = "E0046", "the program exceeds collc's limit on ops, buffer slots or events";
    SimTimeOverflow = "E0047", "a simulated time or size is beyond what the simulator counts";
    Internal = "E0048", "internal compiler error";
    CanaryCounterexample = "E0049", "an execution of the Canary protocol breaks the allreduce's postcondition";
    P4Limit = "E0050", "the schedule does not fit the P4 target";
    NcclTestsLog = "E0051", "an nccl-tests log that collc cannot read";
    MscclOrder = "E0052", "a correct MSCCL XML whose ranks combine in different orders (warning)";
    MscclUnverified = "E0053", "an MSCCL XML of a collective collc cannot execute (warning)";
    MscclUnselectable = "E0054", "sizes at which the runtime would not select the MSCCL XML (warning)";
    CommandLine = "E0055", "invalid command-line arguments";
    BinaryInput = "E0059", "the input is binary, not text";
    InputTooLarge = "E0060", "the input file is larger than collc reads whole";
    Cancelled = "E0061", "the job was cancelled before it finished";
}

impl Serialize for Code {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl Code {
    /// Looks up `E0014` (also accepts `e0014` and `14`).
    pub fn parse(s: &str) -> Option<Code> {
        let digits = s.trim_start_matches(['E', 'e']);
        let n: u32 = digits.parse().ok()?;
        Code::ALL
            .iter()
            .copied()
            .find(|c| c.as_str()[1..].parse::<u32>().ok() == Some(n))
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
