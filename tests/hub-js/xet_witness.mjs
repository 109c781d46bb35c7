// The official JS Xet implementation (@huggingface/xetchunk-wasm and the BLAKE3 it uses,
// both pinned in package.json) as a witness for ours (libhubcache xet/, whose results
// tests/tools/xet_chunk_tool prints as JSON lines). Run by xet_witness.sh.
//
//   node xet_witness.mjs generate DIR        writes the witness inputs into DIR
//   node xet_witness.mjs check DIR OURS      checks OURS (xet_chunk_tool's output for the
//                                            files of DIR) against the JS implementation
//
// The inputs are deterministic: SplitMix64 bytes (the generator of the xet-core and
// xetchunk-wasm test vectors), an empty and a tiny file, a constant run, and NEFF-like
// files (binary header, instruction-like text, fp32/bf16 weights, zero padding, compressed
// payload, repeated regions).
//
// Hashes: for each file the JS code hashes OUR chunks (BLAKE3 keyed with the data key, as
// xetchunk-wasm does, then its xorbHash, fileHash and verificationHash) and prints the
// line our tool printed; the two must be equal byte for byte.
//
// Boundaries: xetchunk-wasm 0.2.0 has one known deviation from xet-core and the spec: it
// cuts where the gear hash matches less than 64 bytes after the skipped prefix of a chunk,
// giving a chunk of 8128..8191 bytes, under the 8 KiB minimum, where xet-core goes on (20
// of the 256 gear table entries match on their own, so ~8% of chunks on random data; its
// own test table differs from xet-core's on those). Every other boundary must be JS's: JS
// chunks the file from the start, and where it makes such a cut inside one of our chunks
// it is restarted at our next boundary; any other difference fails.
import { Hasher } from "@huggingface/blake3-jit";
import { createChunker, finalize, nextBlock, getChunks, hashToHex, xorbHash, fileHash, verificationHash } from "@huggingface/xetchunk-wasm";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const MIN_CHUNK = 8 * 1024;
const MASK64 = (1n << 64n) - 1n;

// SplitMix64 bytes, each u64 little-endian (xet-core `create_random_data(n, seed)`).
function splitmix64(size, seed) {
	const out = new Uint8Array(Math.ceil(size / 8) * 8);
	const view = new DataView(out.buffer);
	let state = BigInt(seed);
	for (let i = 0; i < out.length; i += 8) {
		state = (state + 0x9e3779b97f4a7c15n) & MASK64;
		let z = state;
		z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK64;
		z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK64;
		view.setBigUint64(i, z ^ (z >> 31n), true);
	}
	return out.subarray(0, size);
}

// A small deterministic generator for the NEFF-like parts.
function lcg(seed) {
	let state = seed >>> 0;
	return () => {
		state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
		return state / 4294967296;
	};
}

function instructionText(size, seed) {
	const random = lcg(seed);
	const ops = ["DMA", "MATMUL", "ACT", "POOL", "TENSOR_COPY", "SEM_WAIT", "SEM_SIGNAL", "TRANSPOSE"];
	let text = "";
	for (let line = 0; text.length < size; line++) {
		const op = ops[Math.floor(random() * ops.length)];
		text += `${op.padEnd(12)} q${Math.floor(random() * 16)} [sb:${Math.floor(random() * 4096)}] ` +
			`[psum:${Math.floor(random() * 8)}] len=${64 << Math.floor(random() * 6)} ; ${line}\n`;
	}
	return new TextEncoder().encode(text).subarray(0, size);
}

function float32Weights(count, seed) {
	const random = lcg(seed);
	const values = new Float32Array(count);
	for (let i = 0; i < count; i++) values[i] = Math.sin(i * 0.001) * 0.02 + (random() - 0.5) * 0.001;
	return new Uint8Array(values.buffer);
}

function bfloat16Weights(count, seed) {
	const f32 = new Uint32Array(float32Weights(count, seed).buffer);
	const out = new Uint16Array(count);
	for (let i = 0; i < count; i++) out[i] = f32[i] >>> 16;
	return new Uint8Array(out.buffer);
}

function concat(parts) {
	const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
	let offset = 0;
	for (const part of parts) {
		out.set(part, offset);
		offset += part.length;
	}
	return out;
}

function neffLike(seed) {
	const header = new Uint8Array(1024);
	header.set(new TextEncoder().encode(`NEFF\0\0\0\x02neuron-cache witness ${seed}\0`), 0);
	const text = instructionText(1_500_000, seed);
	const weights = float32Weights(750_000, seed + 1);
	const payload = splitmix64(2_000_000, seed + 2);
	return concat([header, text, weights, new Uint8Array(512 * 1024), payload, bfloat16Weights(500_000, seed + 3),
		text.subarray(200_000, 900_000), weights.subarray(1_000_000, 1_700_000), header.subarray(0, 77)]);
}

function generate(dir) {
	mkdirSync(dir, { recursive: true });
	const files = {
		"empty.bin": new Uint8Array(0),
		"tiny.bin": splitmix64(100, 9),
		"splitmix64-1000000-seed0.bin": splitmix64(1_000_000, 0),
		"splitmix64-8388731-seed42.bin": splitmix64(8 * 1024 * 1024 + 123, 42),
		"constant-1000000.bin": new Uint8Array(1_000_000).fill(59),
		"neff-like-1.neff": neffLike(1),
		"neff-like-2.neff": neffLike(2),
	};
	for (const [name, data] of Object.entries(files)) writeFileSync(join(dir, name), data);
}

// xetchunk-wasm's chunk hash key (src/xet-chunker.ts BLAKE3_DATA_KEY).
const DATA_KEY = new Uint8Array([
	102, 151, 245, 119, 91, 149, 80, 222, 49, 53, 203, 172, 165, 151, 24, 28, 157, 228, 33, 16, 155, 235, 43, 88, 180,
	208, 176, 75, 147, 173, 242, 41,
]);
const chunkHasher = Hasher.newKeyed(DATA_KEY);

// The line our tool prints for a file, computed by the JS code over our chunk sizes.
function jsLine(name, data, sizes) {
	const chunks = [];
	let offset = 0;
	for (const size of sizes) {
		chunks.push({ length: size, hash: chunkHasher.reset().update(data.subarray(offset, offset + size)).finalize(32) });
		offset += size;
	}
	return JSON.stringify({
		file: name,
		size: data.length,
		chunks: chunks.map((chunk) => [chunk.length, hashToHex(chunk.hash)]),
		xorb_hash: hashToHex(xorbHash(chunks)),
		file_hash: hashToHex(fileHash(chunks)),
		verification_hash: hashToHex(verificationHash(chunks.map((chunk) => chunk.hash))),
	});
}

// JS chunking of data, one-shot, after checking the streaming interface agrees.
function jsChunks(data) {
	const chunks = getChunks(data);
	const chunker = createChunker();
	const streamed = [];
	for (let offset = 0; offset < data.length; offset += 65537) {
		streamed.push(...nextBlock(chunker, data.subarray(offset, offset + 65537)));
	}
	const last = finalize(chunker);
	if (last) streamed.push(last);
	const same = chunks.length === streamed.length && chunks.every((chunk, i) =>
		chunk.length === streamed[i].length && hashToHex(chunk.hash) === hashToHex(streamed[i].hash));
	if (!same) throw new Error("xetchunk-wasm streaming and one-shot chunking disagree");
	return chunks.map((chunk) => chunk.length);
}

// Compares our chunk sizes with JS's (see the top comment); returns the number of our
// chunks whose boundaries JS confirmed and of those where it made its known short cut.
function checkBoundaries(data, ours) {
	let confirmed = 0;
	let deviations = 0;
	let start = 0; // of our chunk `index`, where JS (re)started
	let index = 0;
	while (index < ours.length) {
		let js = jsChunks(data.subarray(start));
		let restarted = false;
		for (let j = 0; j < js.length && !restarted; j++, index++) {
			if (js[j] === ours[index]) {
				confirmed++;
				start += ours[index];
				continue;
			}
			const shortCut = js[j] >= MIN_CHUNK - 64 && js[j] < MIN_CHUNK && j + 1 < js.length && ours[index] > js[j];
			if (!shortCut) {
				throw new Error(`chunk ${index} at byte ${start}: ours has ${ours[index]} bytes, xetchunk-wasm ${js[j]}`);
			}
			deviations++;
			start += ours[index];
			restarted = true;
		}
		if (!restarted && index !== ours.length) {
			throw new Error(`xetchunk-wasm has ${js.length} chunks from byte ${start - 1}, ours more`);
		}
	}
	if (start !== data.length) throw new Error(`our chunks cover ${start} bytes of ${data.length}`);
	return { confirmed, deviations };
}

function check(dir, oursPath) {
	const lines = readFileSync(oursPath, "utf8").split("\n").filter((line) => line !== "");
	if (lines.length === 0) throw new Error(`${oursPath}: no results`);
	let failures = 0;
	let total = { confirmed: 0, deviations: 0 };
	for (const line of lines) {
		const ours = JSON.parse(line);
		const data = new Uint8Array(readFileSync(join(dir, ours.file)));
		const sizes = ours.chunks.map(([size]) => size);
		const expected = jsLine(ours.file, data, sizes);
		if (expected !== line) {
			failures++;
			console.error(`${ours.file}: hashes differ\n  ours: ${line.slice(0, 400)}\n  JS:   ${expected.slice(0, 400)}`);
			continue;
		}
		try {
			const counts = checkBoundaries(data, sizes);
			total.confirmed += counts.confirmed;
			total.deviations += counts.deviations;
			console.log(`${ours.file}: ${data.length} bytes, ${sizes.length} chunks: hashes equal; boundaries ` +
				`${counts.confirmed} confirmed, ${counts.deviations} at xetchunk-wasm's short cuts`);
		} catch (error) {
			failures++;
			console.error(`${ours.file}: boundaries differ: ${error.message}`);
		}
	}
	console.log(`${lines.length} files, ${total.confirmed} boundaries confirmed, ${total.deviations} skipped at JS short cuts`);
	if (total.confirmed === 0) {
		console.error("no boundary was confirmed");
		failures++;
	}
	return failures === 0;
}

const [command, ...args] = process.argv.slice(2);
if (command === "generate" && args.length === 1) {
	generate(args[0]);
} else if (command === "check" && args.length === 2) {
	process.exit(check(args[0], args[1]) ? 0 : 1);
} else {
	console.error("usage: node xet_witness.mjs generate DIR | check DIR OURS");
	process.exit(2);
}
