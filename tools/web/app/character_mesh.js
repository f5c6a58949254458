// SPDX-License-Identifier: MIT
// The real SL avatar mesh of a character folder the user opened: the engine's CPU-skinned base
// meshes (slanim_avatar_mesh_vertices, avatar-root frame), one three.js mesh each, with one flat
// colour per mesh type as `slanim view` draws them (skin, hair, eyelashes, eyeballs; the skirt
// is left out: the viewer draws it only with a skirt wearable).
import * as THREE from 'three';

function colourOf(type) {
  if (type === 'hairMesh') return 0x4d3321;
  if (type === 'eyelashMesh') return 0x1f1714;
  if (type.startsWith('eyeBall')) return 0xe6e6eb;
  return 0xcc997a;
}

export class CharacterMesh {
  /** world: the engine's world; avatar: its handle; parent: a group in SL coordinates. */
  constructor(world, avatar, parent) {
    this.world = world;
    this.parent = parent;
    this.group = new THREE.Group();
    this.parts = [];
    for (const m of world.meshes(avatar)) {
      if (m.type === 'skirtMesh' || !m.vertexCount || !m.triangles.length) continue;
      const g = new THREE.BufferGeometry();
      const positions = new Float32Array(3 * m.vertexCount);
      const normals = new Float32Array(3 * m.vertexCount);
      g.setAttribute('position', new THREE.BufferAttribute(positions, 3).setUsage(THREE.DynamicDrawUsage));
      g.setAttribute('normal', new THREE.BufferAttribute(normals, 3).setUsage(THREE.DynamicDrawUsage));
      g.setIndex(new THREE.BufferAttribute(m.triangles, 1));
      const mesh = new THREE.Mesh(g, new THREE.MeshStandardMaterial({ color: colourOf(m.type), roughness: 0.8 }));
      mesh.frustumCulled = false;
      this.group.add(mesh);
      this.parts.push({ index: m.index, positions, normals, geometry: g });
    }
    parent.add(this.group);
  }

  /** Copies the skinned vertices of the last step of `avatar` (the main one: a replay makes a new one). */
  update(avatar) {
    for (const p of this.parts) {
      this.world.meshVertices(avatar, p.index, p.positions, p.normals);
      p.geometry.attributes.position.needsUpdate = true;
      p.geometry.attributes.normal.needsUpdate = true;
    }
  }

  set visible(on) { this.group.visible = on; }

  dispose() {
    this.parent.remove(this.group);
    for (const p of this.parts) p.geometry.dispose();
  }
}
