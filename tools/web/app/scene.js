// SPDX-License-Identifier: MIT
// The three.js scene (WebGL 2): renderer, lights, ground, orbit camera, and the avatar-root
// group that turns SL's frame (X forward, Y left, Z up, metres) into three.js's (Y up).
import * as THREE from 'three';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';

/** The scene around a canvas. render() draws one frame; resize() follows the canvas size. */
export class Scene {
  constructor(canvas) {
    this.canvas = canvas;
    this.renderer = new THREE.WebGLRenderer({ canvas, antialias: true, preserveDrawingBuffer: true });
    if (!this.renderer.capabilities.isWebGL2) throw new Error('this browser has no WebGL 2');
    this.renderer.setPixelRatio(Math.min(window.devicePixelRatio || 1, 2));
    this.scene = new THREE.Scene();
    this.scene.background = new THREE.Color(0x2b3036);
    this.camera = new THREE.PerspectiveCamera(40, 1, 0.01, 200);
    this.camera.position.set(3.2, 1.0, 0.8);
    this.controls = new OrbitControls(this.camera, canvas);
    this.controls.target.set(0, 0.1, 0);
    this.controls.update();
    this.scene.add(new THREE.HemisphereLight(0xdde6f0, 0x404040, 1.6));
    const sun = new THREE.DirectionalLight(0xffffff, 1.8);
    sun.position.set(3, 5, 2);
    this.scene.add(sun);
    const grid = new THREE.GridHelper(20, 40, 0x55606b, 0x3a4048);
    grid.position.y = -1.05; // the ground under a standing avatar (pelvis ≈ 1.05 m above it)
    this.scene.add(grid);
    /** Children use SL coordinates: X forward, Y left, Z up. */
    this.slRoot = new THREE.Group();
    this.slRoot.rotation.x = -Math.PI / 2;
    this.scene.add(this.slRoot);
    this.resize();
    window.addEventListener('resize', () => this.resize());
  }

  resize() {
    const w = this.canvas.clientWidth || 640;
    const h = this.canvas.clientHeight || 480;
    this.renderer.setSize(w, h, false);
    this.camera.aspect = w / h;
    this.camera.updateProjectionMatrix();
  }

  /** A point in SL avatar-root coordinates as a three.js world Vector3. */
  toWorld(x, y, z) {
    return new THREE.Vector3(x, y, z).applyMatrix4(this.slRoot.matrixWorld);
  }

  /** Aims the orbit camera at an SL point from `distance` metres, in front of the avatar. */
  frame(x, y, z, distance) {
    this.slRoot.updateMatrixWorld();
    const target = this.toWorld(x, y, z);
    const dir = this.camera.position.clone().sub(this.controls.target);
    if (dir.lengthSq() < 1e-8) dir.set(1, 0.3, 0.2);
    dir.setLength(distance);
    this.controls.target.copy(target);
    this.camera.position.copy(target).add(dir);
    this.controls.update();
  }

  render() {
    this.renderer.render(this.scene, this.camera);
  }

  /** Screen position (CSS pixels) of an SL point, or null when behind the camera. */
  project(x, y, z) {
    const v = this.toWorld(x, y, z).project(this.camera);
    if (v.z > 1) return null;
    return { x: (v.x + 1) / 2 * this.canvas.clientWidth, y: (1 - v.y) / 2 * this.canvas.clientHeight };
  }
}
