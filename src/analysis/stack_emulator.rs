//! A 32-lane warp running a small program under the synchronization-stack model of Białas &
//! Strzelecki, section III (after the patents it cites): SSY pushes a SYNC token (active mask,
//! reconvergence address); a predicated branch whose active lanes disagree pushes a DIV token
//! (the not-taken lanes, pc + 1) and continues with the taken lanes (Algorithm 1); an
//! instruction carrying the pop bit (`.S`) pops a token, takes its mask and pc, and then
//! executes (Algorithm 2, carrier executed after unwinding, as the paper assumes).
//!
//! The stack has a finite on-chip part of `depth` entries. A push that would overflow it first
//! spills the `chunk` lowest on-chip entries to memory; a pop that finds the on-chip part empty
//! first refills up to `chunk` entries from memory. Spills and refills are counted separately.
//!
//! [`single_loop`] and [`double_loop`] are the programs of the paper's Listings 3 and 4, with
//! per-lane loop bounds.

use serde::Serialize;

pub const WARP_LANES: usize = 32;
const FULL_MASK: u32 = u32::MAX;
/// No program of ours comes near this; a bug that loops forever stops here with an error.
const STEP_LIMIT: usize = 10_000_000;

/// Per-lane registers; `Bound` is the lane's loop bound and is never written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reg {
    I,
    J,
    Bound,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operand {
    Reg(Reg),
    Const(i32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Push a SYNC token {active mask, target}.
    Ssy {
        target: usize,
    },
    /// `reg = 0` in active lanes.
    Zero(Reg),
    /// `reg += 1` in active lanes.
    Increment(Reg),
    /// The loop body's arithmetic; no effect on control.
    Alu,
    /// `P = left < right` in active lanes.
    SetPredicate {
        left: Reg,
        right: Operand,
    },
    /// `@P BRA target`.
    Branch {
        target: usize,
    },
    Nop,
    Exit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Instruction {
    pub op: Op,
    /// The `.S` suffix: pop the stack before executing.
    pub pop: bool,
}

const fn plain(op: Op) -> Instruction {
    Instruction { op, pop: false }
}

impl Instruction {
    pub fn mnemonic(&self) -> String {
        let base = match self.op {
            Op::Ssy { target } => format!("SSY {target}"),
            Op::Zero(reg) => format!("MOV {reg:?}, 0"),
            Op::Increment(reg) => format!("IADD {reg:?}, 1"),
            Op::Alu => "IMAD acc".to_string(),
            Op::SetPredicate { left, right } => match right {
                Operand::Reg(reg) => format!("ISETP.LT P, {left:?}, {reg:?}"),
                Operand::Const(value) => format!("ISETP.LT P, {left:?}, {value}"),
            },
            Op::Branch { target } => format!("@P BRA {target}"),
            Op::Nop => "NOP".to_string(),
            Op::Exit => "EXIT".to_string(),
        };
        if self.pop { format!("{base}.S") } else { base }
    }
}

/// Listing 3: the single loop `for (i = 0; i < bound; ++i) acc = acc * 3 + i`.
/// Lanes with a bound below 1 branch straight to the pop at 8.
pub fn single_loop() -> Vec<Instruction> {
    vec![
        /* 0 */ plain(Op::Zero(Reg::I)),
        /* 1 */
        plain(Op::SetPredicate {
            left: Reg::Bound,
            right: Operand::Const(1),
        }),
        /* 2 */ plain(Op::Ssy { target: 9 }),
        /* 3 */ plain(Op::Branch { target: 8 }),
        /* 4 */ plain(Op::Alu),
        /* 5 */ plain(Op::Increment(Reg::I)),
        /* 6 */
        plain(Op::SetPredicate {
            left: Reg::I,
            right: Operand::Reg(Reg::Bound),
        }),
        /* 7 */ plain(Op::Branch { target: 4 }),
        /* 8 */ Instruction {
            op: Op::Nop,
            pop: true,
        },
        /* 9 */ plain(Op::Exit),
    ]
}

/// Listing 4: the double loop, both bounds the lane's bound; the inner loop has its own SSY
/// and pop in every outer iteration.
pub fn double_loop() -> Vec<Instruction> {
    vec![
        /*  0 */ plain(Op::Zero(Reg::I)),
        /*  1 */
        plain(Op::SetPredicate {
            left: Reg::Bound,
            right: Operand::Const(1),
        }),
        /*  2 */ plain(Op::Ssy { target: 17 }),
        /*  3 */ plain(Op::Branch { target: 16 }),
        /*  4 */ plain(Op::Zero(Reg::J)),
        /*  5 */
        plain(Op::SetPredicate {
            left: Reg::Bound,
            right: Operand::Const(1),
        }),
        /*  6 */ plain(Op::Ssy { target: 13 }),
        /*  7 */ plain(Op::Branch { target: 12 }),
        /*  8 */ plain(Op::Alu),
        /*  9 */ plain(Op::Increment(Reg::J)),
        /* 10 */
        plain(Op::SetPredicate {
            left: Reg::J,
            right: Operand::Reg(Reg::Bound),
        }),
        /* 11 */ plain(Op::Branch { target: 8 }),
        /* 12 */ Instruction {
            op: Op::Nop,
            pop: true,
        },
        /* 13 */ plain(Op::Increment(Reg::I)),
        /* 14 */
        plain(Op::SetPredicate {
            left: Reg::I,
            right: Operand::Reg(Reg::Bound),
        }),
        /* 15 */ plain(Op::Branch { target: 4 }),
        /* 16 */ Instruction {
            op: Op::Nop,
            pop: true,
        },
        /* 17 */ plain(Op::Exit),
    ]
}

/// The on-chip stack: `depth` entries (None: unbounded), spilled and refilled `chunk` at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StackShape {
    pub depth: Option<usize>,
    pub chunk: usize,
}

impl StackShape {
    pub const UNBOUNDED: StackShape = StackShape {
        depth: None,
        chunk: 1,
    };
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TokenKind {
    Sync,
    Div,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Token {
    kind: TokenKind,
    mask: u32,
    pc: usize,
}

/// Totals of one emulated run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct StackCounts {
    pub sync_pushes: usize,
    /// Divergent branches: the events the cost model charges for.
    pub div_pushes: usize,
    pub pops: usize,
    pub spills: usize,
    pub refills: usize,
    pub instructions: usize,
    pub max_depth: usize,
}

impl StackCounts {
    pub fn pushes(&self) -> usize {
        self.sync_pushes + self.div_pushes
    }
}

/// The state after one executed instruction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Step {
    pub step: usize,
    pub pc: usize,
    pub instruction: String,
    /// Lanes that executed this instruction (for a pop: the mask it popped).
    pub active_mask: u32,
    /// Entries on the whole stack (on chip plus spilled) after the step.
    pub depth: usize,
    pub on_chip_depth: usize,
    /// "push-sync", "push-div", "pop", with "+spill"/"+refill" when memory was touched.
    pub event: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StackOp {
    Push,
    Pop,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    pub counts: StackCounts,
    pub steps: Vec<Step>,
    /// Every push and pop in order. A finite stack never changes control flow, so this
    /// sequence alone gives the spills of any other stack shape ([`spills_for`]).
    pub stack_ops: Vec<StackOp>,
}

/// Spills and refills that `ops` cause on a stack of `shape`, without re-running the program.
pub fn spills_for(ops: &[StackOp], shape: StackShape) -> (usize, usize) {
    let Some(depth) = shape.depth else {
        return (0, 0);
    };
    let (mut on_chip, mut memory, mut spills, mut refills) = (0_usize, 0_usize, 0, 0);
    for op in ops {
        match op {
            StackOp::Push => {
                if on_chip >= depth {
                    let moved = shape.chunk.clamp(1, on_chip);
                    on_chip -= moved;
                    memory += moved;
                    spills += 1;
                }
                on_chip += 1;
            }
            StackOp::Pop => {
                if on_chip == 0 && memory > 0 {
                    let moved = shape.chunk.clamp(1, memory);
                    memory -= moved;
                    on_chip += moved;
                    refills += 1;
                }
                on_chip = on_chip.saturating_sub(1);
            }
        }
    }
    (spills, refills)
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmulatorError {
    #[error("the program popped an empty stack at pc {0}")]
    EmptyPop(usize),
    #[error("the program ran past its end (pc {0})")]
    PcOutOfRange(usize),
    #[error("the program did not reach EXIT within {STEP_LIMIT} steps")]
    StepLimit,
    #[error("a stack of depth 0 cannot hold a token; use a depth of 1 or more")]
    ZeroDepth,
}

struct Stack {
    shape: StackShape,
    on_chip: Vec<Token>,
    memory: Vec<Token>,
}

impl Stack {
    fn depth(&self) -> usize {
        self.on_chip.len() + self.memory.len()
    }

    /// Returns whether a spill happened.
    fn push(&mut self, token: Token) -> bool {
        let mut spilled = false;
        if let Some(depth) = self.shape.depth
            && self.on_chip.len() >= depth
        {
            let count = self.shape.chunk.clamp(1, self.on_chip.len());
            self.memory.extend(self.on_chip.drain(..count));
            spilled = true;
        }
        self.on_chip.push(token);
        spilled
    }

    /// Returns the token and whether a refill happened.
    fn pop(&mut self) -> Option<(Token, bool)> {
        let mut refilled = false;
        if self.on_chip.is_empty() && !self.memory.is_empty() {
            let count = self.shape.chunk.clamp(1, self.memory.len());
            let from = self.memory.len() - count;
            self.on_chip.extend(self.memory.drain(from..));
            refilled = true;
        }
        self.on_chip.pop().map(|token| (token, refilled))
    }
}

/// Runs `program` on a warp whose lane `l` has loop bound `bounds[l]`, recording every step
/// when `trace` is set.
pub fn run(
    program: &[Instruction],
    bounds: &[i32; WARP_LANES],
    shape: StackShape,
    trace: bool,
) -> Result<Run, EmulatorError> {
    if shape.depth == Some(0) {
        return Err(EmulatorError::ZeroDepth);
    }
    let mut registers = [[0_i32; WARP_LANES]; 2];
    let mut predicate = 0_u32;
    let mut active = FULL_MASK;
    let mut pc = 0;
    let mut stack = Stack {
        shape,
        on_chip: Vec::new(),
        memory: Vec::new(),
    };
    let mut counts = StackCounts::default();
    let mut steps = Vec::new();
    let mut stack_ops = Vec::new();
    let read = |registers: &[[i32; WARP_LANES]; 2], reg: Reg, lane: usize| match reg {
        Reg::I => registers[0][lane],
        Reg::J => registers[1][lane],
        Reg::Bound => bounds[lane],
    };
    for step in 0..STEP_LIMIT {
        let instruction = *program.get(pc).ok_or(EmulatorError::PcOutOfRange(pc))?;
        let at = pc;
        let mut event = String::new();
        if instruction.pop {
            let (token, refilled) = stack.pop().ok_or(EmulatorError::EmptyPop(pc))?;
            counts.pops += 1;
            stack_ops.push(StackOp::Pop);
            event = if refilled { "pop+refill" } else { "pop" }.to_string();
            counts.refills += usize::from(refilled);
            active = token.mask;
            pc = token.pc;
        } else {
            pc += 1;
        }
        counts.instructions += 1;
        let executing = active;
        let lanes = (0..WARP_LANES).filter(|lane| active & (1 << lane) != 0);
        match instruction.op {
            Op::Ssy { target } => {
                let spilled = stack.push(Token {
                    kind: TokenKind::Sync,
                    mask: active,
                    pc: target,
                });
                counts.sync_pushes += 1;
                stack_ops.push(StackOp::Push);
                counts.spills += usize::from(spilled);
                event = if spilled {
                    "push-sync+spill"
                } else {
                    "push-sync"
                }
                .to_string();
            }
            Op::Zero(reg) | Op::Increment(reg) => {
                let index = if reg == Reg::J { 1 } else { 0 };
                for lane in lanes {
                    registers[index][lane] = match instruction.op {
                        Op::Zero(_) => 0,
                        _ => registers[index][lane] + 1,
                    };
                }
            }
            Op::SetPredicate { left, right } => {
                for lane in lanes {
                    let right = match right {
                        Operand::Reg(reg) => read(&registers, reg, lane),
                        Operand::Const(value) => value,
                    };
                    let bit = 1_u32 << lane;
                    if read(&registers, left, lane) < right {
                        predicate |= bit;
                    } else {
                        predicate &= !bit;
                    }
                }
            }
            Op::Branch { target } => {
                let taken = active & predicate;
                let not_taken = active & !predicate;
                if taken == active {
                    pc = target;
                } else if taken != 0 {
                    let spilled = stack.push(Token {
                        kind: TokenKind::Div,
                        mask: not_taken,
                        pc: at + 1,
                    });
                    counts.div_pushes += 1;
                    stack_ops.push(StackOp::Push);
                    counts.spills += usize::from(spilled);
                    event = if spilled {
                        "push-div+spill"
                    } else {
                        "push-div"
                    }
                    .to_string();
                    active = taken;
                    pc = target;
                }
            }
            Op::Alu | Op::Nop => {}
            Op::Exit => {}
        }
        counts.max_depth = counts.max_depth.max(stack.depth());
        if trace {
            steps.push(Step {
                step,
                pc: at,
                instruction: instruction.mnemonic(),
                active_mask: executing,
                depth: stack.depth(),
                on_chip_depth: stack.on_chip.len(),
                event,
            });
        }
        if instruction.op == Op::Exit {
            return Ok(Run {
                counts,
                steps,
                stack_ops,
            });
        }
    }
    Err(EmulatorError::StepLimit)
}

#[cfg(test)]
mod tests;
