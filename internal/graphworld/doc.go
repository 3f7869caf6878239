// Package graphworld generates the Synthetic Graph World: trajectories of an
// agent walking a random graph of pages, each step an action and a quantized
// observation (S slots of M subspace codes in [0,K)), optionally with the
// float slot vectors the codes quantize. It is the test world of wmzip, after
// the Synthetic Graph World of the CTMC paper ("Heavy-Tailed Memory Traces in
// Long-Horizon Language Agents", seeds/heavy-tailed-memory-traces-ctmc.txt),
// whose five graph families it mirrors, and it knows its own entropy rate: the
// lossless limit of a codec whose model knows the world.
//
// # World (fixed by Config.GraphSeed)
//
// The graph is undirected, simple and connected (components are joined to
// the largest by one random edge each). Families, with target mean degree d:
//
//   - uniform: configuration model with every degree d (self-loops and
//     duplicate edges dropped, so degrees are d or a little less);
//   - exponential: configuration model with degrees from the geometric law
//     P(k) = (1/d)(1-1/d)^(k-1), k >= 1;
//   - scalefree: Barabási–Albert, ceil(d/2) edges per new node;
//   - modular: Communities equal communities, Erdős–Rényi inside with mean
//     degree 0.9d, plus 0.05·Nodes·d random edges between communities;
//   - mixed: Communities communities of random sizes, built in turn by the
//     uniform, exponential, scale-free and Erdős–Rényi generators, joined
//     as in modular.
//
// Each node's latent state is laid out like a rendered page. With the
// default 32 slots: slots 0–3 are the frame (slots 0–1 identical on every
// node, slots 2–3 shared by the nodes of one section: the community, or a
// run of the breadth-first order for families without communities); slots
// 4–30 are content, each independently a tile of a world-wide pool of
// max(8, Nodes/4) tiles with Zipf(1) popularity (probability 1/2), or a tile
// unique to the node; slot 31 is dynamic: drawn afresh at every step, like
// a clock or an advert. So about 12.5% frame, 42% pool tiles, 42% unique
// tiles and 3% per-visit content. All random codes follow a per-subspace
// Zipf(Skew) law over a random ordering of [0,K), since real quantizer
// codes have skewed marginals. Latent states are made pairwise distinct.
//
// # Walk (fixed by Config.Seed)
//
// An episode starts at a uniform random node with action -1 (shown
// unshifted). Each later
// step draws an action from ActionProbs and moves to a neighbour chosen
// uniformly (the action does not choose the neighbour; it chooses the
// view). The observed state is the new node's latent state with its content
// slots rotated by the action's shift (a scroll: observed content slot c
// shows latent content slot (c+shift) mod C; frame and dynamic slots stay
// in place), dynamic slots drawn afresh, and then every code replaced with
// probability Noise by a uniform value in [0,K). The default actions, with
// probabilities 0.30, 0.20, 0.15, 0.15, 0.10, 0.10, shift by 0, 0, +1 row,
// -1 row, +2 rows and +1 slot, a row being Slots/8 slots. Stationary visits
// are proportional to degree, so hubs of the heavy-tailed families are
// revisited often: the concentration the CTMC paper audits.
//
// # Entropy rate
//
// Result.EntropyBitsPerState is the mean over the generated steps of the
// conditional entropy of step t's actions and codes given the world and the
// node of step t-1:
//
//	first step of an episode:  log2(Nodes) + Hc
//	other steps:               H(A) + log2(deg(u_{t-1})) + Hc
//	Hc = (S-D)·M·h(e) + D·Σ_m H((1-e)·q_m + e/K)
//	h(e) = -(1-e+e/K)·log2(1-e+e/K) - (K-1)·(e/K)·log2(e/K)
//
// where H(A) is the entropy of the action law, D the number of dynamic slots
// and q_m the code law of subspace m. Expectations replace the realized
// -log2 p wherever they are known given the previous node, which lowers
// the variance without changing the mean. Its standard error is by batch
// means over floor(sqrt(T)) runs of steps.
//
// This is the entropy of the generator's choices. A coder stores only the
// actions and codes, not the node path, so the true limit is lower by
// H(nodes | actions, codes). The world is built so that this gap vanishes:
// states are pairwise distinct and differ in hundreds of coordinates, so one
// step's codes identify the node beyond doubt at the default noise. With
// Config.Ideal, Result.IdealBitsPerState reports the exact code length
// -log2 P(actions, codes | world) of the generated data by forward
// filtering, which measures the gap: in the default world it is zero to
// rounding (about 1e-9 bit per state; TestIdealGap), and the brute-force
// test shows where it is not (tiny alphabets with noise).
//
// The defaults (1% noise, one dynamic slot, Zipf(1) codes, six actions) put
// the default world at about 300 bits per state out of 32·32·6 = 6144 raw:
// about 140 bits of substitution noise, 155 bits of per-visit content and 5
// bits of walk choices, so that neither noise nor the walk alone sets the
// rate; everything else — frames, pool tiles, unique tiles, the scroll — is
// predictable to a model that knows the world, and learnable from training
// walks over the same GraphSeed.
//
// # Observations
//
// With Config.Obs, each (subspace m, code c) has a Gaussian prototype of
// ObsDim/M unit-variance dimensions, and slot vector = R·concat_m
// prototype[m][code m] + N(0, ObsSigma²) per dimension, where R is a fixed
// Haar-random rotation of ObsDim dimensions (so an OPQ quantizer has a
// rotation to learn). Prototypes and R are fixed by GraphSeed, the noise by
// Seed.
//
// Everything is deterministic: math/rand/v2 PCG streams seeded explicitly,
// one stream per purpose, and no dependence on map order.
package graphworld
