//! Job graphs: vertices with a parallelism, edges with a ship strategy.
//!
//! A vertex is a source or an operator, created once per subtask by a factory. Before a job
//! runs, forward edges between vertices of equal parallelism are chained: when a vertex's only
//! output is a FORWARD edge to a vertex whose only input it is, both run in one actor and
//! elements pass between them by a function call.

use std::fmt;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::ids::Fnv;
use crate::operator::{Operator, Source, SubtaskInfo};
use crate::partition::ShipStrategy;

/// Index of a vertex in its [`JobGraph`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VertexId(pub usize);

/// Builds one source instance per subtask.
pub type SourceFactory = Arc<dyn Fn(&SubtaskInfo) -> Box<dyn Source> + Send + Sync>;

/// Builds one operator instance per subtask.
pub type OperatorFactory = Arc<dyn Fn(&SubtaskInfo) -> Box<dyn Operator> + Send + Sync>;

/// What a vertex runs.
#[derive(Clone)]
pub enum VertexKind {
    /// A source: no inputs.
    Source(SourceFactory),
    /// An operator with one or more inputs.
    Operator(OperatorFactory),
}

/// A node of the job graph.
#[derive(Clone)]
pub struct Vertex {
    /// Name used in metrics, errors and logs.
    pub name: String,
    /// Number of subtasks.
    pub parallelism: usize,
    /// What each subtask runs.
    pub kind: VertexKind,
}

/// A connection from the output of one vertex to an input of another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    /// The sending vertex.
    pub from: VertexId,
    /// The receiving vertex.
    pub to: VertexId,
    /// Which input of the receiver (0, or 1 for the second input of a two-input operator).
    pub input: usize,
    /// How rows are divided among the receiver's subtasks.
    pub strategy: ShipStrategy,
}

/// A dataflow of vertices and edges; build it, then run it with [`crate::job::start`].
#[derive(Clone, Default)]
pub struct JobGraph {
    vertices: Vec<Vertex>,
    edges: Vec<Edge>,
}

impl fmt::Debug for Vertex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            VertexKind::Source(_) => "source",
            VertexKind::Operator(_) => "operator",
        };
        write!(f, "{} {:?} (parallelism {})", kind, self.name, self.parallelism)
    }
}

impl fmt::Debug for JobGraph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JobGraph").field("vertices", &self.vertices).field("edges", &self.edges).finish()
    }
}

impl JobGraph {
    /// An empty graph.
    pub fn new() -> Self {
        JobGraph::default()
    }

    /// Adds a source vertex.
    pub fn add_source(
        &mut self,
        name: impl Into<String>,
        parallelism: usize,
        factory: impl Fn(&SubtaskInfo) -> Box<dyn Source> + Send + Sync + 'static,
    ) -> VertexId {
        self.add_vertex(Vertex { name: name.into(), parallelism, kind: VertexKind::Source(Arc::new(factory)) })
    }

    /// Adds an operator vertex.
    pub fn add_operator(
        &mut self,
        name: impl Into<String>,
        parallelism: usize,
        factory: impl Fn(&SubtaskInfo) -> Box<dyn Operator> + Send + Sync + 'static,
    ) -> VertexId {
        self.add_vertex(Vertex { name: name.into(), parallelism, kind: VertexKind::Operator(Arc::new(factory)) })
    }

    /// Adds a vertex as given.
    pub fn add_vertex(&mut self, vertex: Vertex) -> VertexId {
        self.vertices.push(vertex);
        VertexId(self.vertices.len() - 1)
    }

    /// Connects `from` to the first input of `to`.
    pub fn connect(&mut self, from: VertexId, to: VertexId, strategy: ShipStrategy) {
        self.connect_input(from, to, 0, strategy);
    }

    /// Connects `from` to input `input` of `to`.
    pub fn connect_input(&mut self, from: VertexId, to: VertexId, input: usize, strategy: ShipStrategy) {
        self.edges.push(Edge { from, to, input, strategy });
    }

    /// The vertices, indexed by [`VertexId`].
    pub fn vertices(&self) -> &[Vertex] {
        &self.vertices
    }

    /// The edges, in the order they were added.
    pub fn edges(&self) -> &[Edge] {
        &self.edges
    }

    /// The vertex with this id.
    pub fn vertex(&self, id: VertexId) -> &Vertex {
        &self.vertices[id.0]
    }

    /// Edges into `id`, in the order added.
    pub fn inputs_of(&self, id: VertexId) -> impl Iterator<Item = &Edge> {
        self.edges.iter().filter(move |e| e.to == id)
    }

    /// Edges out of `id`, in the order added.
    pub fn outputs_of(&self, id: VertexId) -> impl Iterator<Item = &Edge> {
        self.edges.iter().filter(move |e| e.from == id)
    }

    /// Checks that the graph can run: ids in range, positive parallelism, sources without
    /// inputs, operators with inputs numbered from 0, FORWARD only between equal
    /// parallelism, no cycles.
    ///
    /// # Errors
    /// [`Error::InvalidGraph`] saying what is wrong and where.
    pub fn validate(&self) -> Result<()> {
        let invalid = |msg: String| Err(Error::InvalidGraph(msg));
        if self.vertices.is_empty() {
            return invalid("the graph has no vertices".into());
        }
        for e in &self.edges {
            if e.from.0 >= self.vertices.len() || e.to.0 >= self.vertices.len() {
                return invalid(format!("edge {:?} -> {:?} names a vertex that does not exist", e.from, e.to));
            }
            let (from, to) = (self.vertex(e.from), self.vertex(e.to));
            if e.strategy == ShipStrategy::Forward && from.parallelism != to.parallelism {
                return invalid(format!(
                    "FORWARD edge from '{}' (parallelism {}) to '{}' (parallelism {}) needs equal parallelism",
                    from.name, from.parallelism, to.name, to.parallelism
                ));
            }
        }
        for (i, v) in self.vertices.iter().enumerate() {
            if v.parallelism == 0 {
                return invalid(format!("vertex '{}' has parallelism 0", v.name));
            }
            let mut ports: Vec<usize> = self.inputs_of(VertexId(i)).map(|e| e.input).collect();
            ports.sort_unstable();
            ports.dedup();
            match v.kind {
                VertexKind::Source(_) if !ports.is_empty() => {
                    return invalid(format!("source '{}' cannot have inputs", v.name));
                }
                VertexKind::Operator(_) if ports.is_empty() => {
                    return invalid(format!("operator '{}' has no input", v.name));
                }
                VertexKind::Operator(_) if ports.iter().enumerate().any(|(i, p)| i != *p) => {
                    return invalid(format!("inputs of operator '{}' must be numbered from 0 without gaps", v.name));
                }
                _ => {}
            }
        }
        self.topological_order().map(|_| ())
    }

    /// Vertices in an order where every edge goes forward.
    ///
    /// # Errors
    /// [`Error::InvalidGraph`] when the graph has a cycle.
    pub fn topological_order(&self) -> Result<Vec<VertexId>> {
        let n = self.vertices.len();
        let mut in_degree = vec![0usize; n];
        for e in &self.edges {
            in_degree[e.to.0] += 1;
        }
        let mut ready: Vec<usize> = (0..n).filter(|&v| in_degree[v] == 0).rev().collect();
        let mut order = Vec::with_capacity(n);
        while let Some(v) = ready.pop() {
            order.push(VertexId(v));
            for e in self.outputs_of(VertexId(v)) {
                in_degree[e.to.0] -= 1;
                if in_degree[e.to.0] == 0 {
                    ready.push(e.to.0);
                }
            }
        }
        if order.len() == n {
            Ok(order)
        } else {
            Err(Error::InvalidGraph("the graph has a cycle".into()))
        }
    }

    /// A stable id for every vertex (by [`VertexId`]), under which its state is checkpointed
    /// and restored: the vertex's name and the ids of its inputs (by input port), hashed,
    /// and numbered among vertices that share both. Parallelism, exchanges and chaining do
    /// not enter it, so the same script planned again, at another parallelism too, finds its
    /// state (as Flink's generated operator ids do); a changed plan gives changed operators
    /// other ids.
    ///
    /// # Errors
    /// [`Error::InvalidGraph`] when the graph has a cycle.
    pub fn operator_ids(&self) -> Result<Vec<String>> {
        let mut ids = vec![String::new(); self.vertices.len()];
        let mut seen: std::collections::HashMap<u64, usize> = std::collections::HashMap::new();
        for v in self.topological_order()? {
            let mut inputs: Vec<&Edge> = self.inputs_of(v).collect();
            inputs.sort_by_key(|e| e.input);
            let mut hash = Fnv::default();
            hash.write(self.vertex(v).name.as_bytes());
            for e in inputs {
                hash.write(&[0xff, e.input as u8]);
                hash.write(ids[e.from.0].as_bytes());
            }
            let occurrence = seen.entry(hash.0).or_default();
            ids[v.0] = format!("{}#{:016x}-{occurrence}", self.vertex(v).name, hash.0);
            *occurrence += 1;
        }
        Ok(ids)
    }

    /// Whether `edge` joins its two vertices into one chain.
    pub fn is_chained(&self, edge: &Edge) -> bool {
        edge.strategy == ShipStrategy::Forward
            && self.vertex(edge.from).parallelism == self.vertex(edge.to).parallelism
            && self.outputs_of(edge.from).count() == 1
            && self.inputs_of(edge.to).count() == 1
    }

    /// The chains, each a list of vertices joined by chained edges, head first, in
    /// topological order of their heads.
    ///
    /// # Errors
    /// [`Error::InvalidGraph`] when the graph has a cycle.
    pub fn chains(&self) -> Result<Vec<Vec<VertexId>>> {
        let order = self.topological_order()?;
        let chained_into: Vec<bool> =
            (0..self.vertices.len()).map(|v| self.inputs_of(VertexId(v)).any(|e| self.is_chained(e))).collect();
        let mut chains = Vec::new();
        for head in order.into_iter().filter(|v| !chained_into[v.0]) {
            let mut chain = vec![head];
            let mut last = head;
            while let Some(next) = self.outputs_of(last).find(|e| self.is_chained(e)).map(|e| e.to) {
                chain.push(next);
                last = next;
            }
            chains.push(chain);
        }
        Ok(chains)
    }
}
