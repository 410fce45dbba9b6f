// Load rigged glTF/GLB files with three.js (GLTFLoader.parseAsync under node), play one animation at one
// time (or none: the file's node pose), and print the skinned vertex positions of every skinned mesh.
// Usage: node skinned_check.mjs SPEC_JSON   where SPEC_JSON is a list of {"file", "animation"?, "time"?}.
// Prints one JSON list, one entry per spec: {"meshes": [{"mesh", "primitive", "name", "skinned"}]} where
// mesh/primitive are the glTF indices of the primitive (three.js association) and skinned is every
// vertex after skinning (SkinnedMesh.applyBoneTransform on the bind-pose position), flattened.
// External buffers and images are read beside the file.
import fs from "node:fs";
import path from "node:path";
import * as THREE from "three";
import { GLTFLoader } from "three/examples/jsm/loaders/GLTFLoader.js";

globalThis.ProgressEvent ??= class ProgressEvent extends Event {
  constructor(type, init = {}) {
    super(type);
    Object.assign(this, init);
  }
};

// Under node there is no image decoding: a plugin gives every texture an empty one (the texture's data is
// not what is checked here).
const noTextures = () => ({ name: "no_textures", loadTexture: async () => new THREE.Texture() });

async function check(spec) {
  const bytes = fs.readFileSync(spec.file);
  const data = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  const folder = path.dirname(path.resolve(spec.file));
  const loader = new GLTFLoader().register(noTextures);
  // three's FileLoader fetches a Request for each external file; under node, files beside the glTF are
  // served from its folder through a made-up http base.
  const base = "http://files.local/";
  const realFetch = globalThis.fetch;
  globalThis.fetch = async (input, init) => {
    const u = typeof input === "string" ? input : input.url;
    if (!u.startsWith(base)) return realFetch(input, init);
    return new Response(fs.readFileSync(path.resolve(folder, decodeURIComponent(u.slice(base.length)))));
  };
  let gltf;
  try {
    gltf = await loader.parseAsync(data, base);
  } finally {
    globalThis.fetch = realFetch;
  }
  const assoc = gltf.parser.associations;
  if (spec.animation != null) {
    const clip = gltf.animations.find((a) => a.name === spec.animation);
    if (!clip) throw new Error(`no animation ${spec.animation}`);
    const mixer = new THREE.AnimationMixer(gltf.scene);
    const action = mixer.clipAction(clip);
    action.setLoop(THREE.LoopOnce, 1);
    action.clampWhenFinished = true;
    action.reset().play();
    mixer.setTime(spec.time ?? 0);
  }
  gltf.scene.updateMatrixWorld(true);
  const meshes = [];
  const p = new THREE.Vector3();
  gltf.scene.traverse((o) => {
    if (!o.isSkinnedMesh) return;
    o.skeleton.update();
    const a = assoc.get(o) ?? {};
    const skinned = [];
    const position = o.geometry.attributes.position;
    for (let i = 0; i < position.count; i++) {
      p.fromBufferAttribute(position, i);
      o.applyBoneTransform(i, p);
      skinned.push(p.x, p.y, p.z);
    }
    meshes.push({ mesh: a.meshes ?? -1, primitive: a.primitives ?? -1, name: o.name, skinned });
  });
  return { meshes, animations: gltf.animations.map((a) => a.name) };
}

const out = [];
for (const spec of JSON.parse(process.argv[2])) out.push(await check(spec));
process.stdout.write(JSON.stringify(out));
