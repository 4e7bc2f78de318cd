"""Geometry for the synthetic dice renderer: a wide-angle camera over a tray, and rounded cubes.

World coordinates are millimetres with the tray floor at ``z = 0`` and ``z`` pointing up. A die is
a cube of side ``s`` centred on its pose's ``centre``; its rotation ``R`` maps die-local directions
to world directions. Die-local face directions are indexed ``0..5`` as ``+x, -x, +y, -y, +z, -z``.

Pure numpy: no OpenCV drawing here, so the maths can be checked on its own.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Die-local outward normals of the six faces, and for each face two in-face axes (u, v) with
# u x v = normal, so that a face texture (x right = u, y down = -v) is seen unmirrored from outside.
FACE_NORMALS = np.array(
    [[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]], dtype=np.float64
)
FACE_U = np.array([[0, 1, 0], [0, -1, 0], [-1, 0, 0], [1, 0, 0], [1, 0, 0], [-1, 0, 0]], dtype=np.float64)
FACE_V = np.cross(FACE_NORMALS, FACE_U)
OPPOSITE = (1, 0, 3, 2, 5, 4)
# For each face: the index of the neighbouring face across its edge in the texture's
# left (-u), right (+u), top (+v) and bottom (-v) directions.
NEIGHBOURS = tuple(
    tuple(int(np.argmax(FACE_NORMALS @ d)) for d in (-FACE_U[i], FACE_U[i], FACE_V[i], -FACE_V[i]))
    for i in range(6)
)


def rot_x(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def rot_y(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def rot_z(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def rot_axis(axis: np.ndarray, angle: float) -> np.ndarray:
    """Rodrigues rotation about a (not necessarily unit) axis."""
    k = np.asarray(axis, dtype=np.float64)
    k = k / (np.linalg.norm(k) + 1e-12)
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(angle) * kx + (1 - np.cos(angle)) * (kx @ kx)


# Rotation bringing each die-local face direction to world +z (that face on top).
_TO_TOP = (rot_y(-np.pi / 2), rot_y(np.pi / 2), rot_x(np.pi / 2), rot_x(-np.pi / 2), np.eye(3), rot_x(np.pi))


def resting_rotation(top_index: int, yaw: float, tilt_axis_angle: float = 0.0, tilt: float = 0.0) -> np.ndarray:
    """Rotation of a die lying with local face ``top_index`` up, turned by ``yaw`` about the vertical,
    then tipped by ``tilt`` radians about a horizontal axis at angle ``tilt_axis_angle``."""
    r = rot_z(yaw) @ _TO_TOP[top_index]
    if tilt:
        axis = np.array([np.cos(tilt_axis_angle), np.sin(tilt_axis_angle), 0.0])
        r = rot_axis(axis, tilt) @ r
    return r


def top_face_index(rotation: np.ndarray) -> int:
    """The die-local face whose outward normal points most nearly up."""
    return int(np.argmax((rotation @ FACE_NORMALS.T)[2]))


def cube_corners(side: float) -> np.ndarray:
    h = side / 2
    return np.array([[x, y, z] for x in (-h, h) for y in (-h, h) for z in (-h, h)], dtype=np.float64)


def _sphere_dirs(n_ring: int = 8) -> np.ndarray:
    dirs = [[0, 0, 1], [0, 0, -1]]
    for lat in (-np.pi / 4, 0.0, np.pi / 4):
        for k in range(n_ring):
            a = 2 * np.pi * k / n_ring
            dirs.append([np.cos(lat) * np.cos(a), np.cos(lat) * np.sin(a), np.sin(lat)])
    return np.array(dirs)


_SPHERE = _sphere_dirs()


def rounded_cube_points(side: float, radius: float) -> np.ndarray:
    """Points whose convex hull is a cube of ``side`` with edges and corners rounded by ``radius``
    (the Minkowski sum of a smaller cube and a ball), in die-local coordinates."""
    inner = cube_corners(side - 2 * radius)
    return (inner[:, None, :] + radius * _SPHERE[None, :, :]).reshape(-1, 3)


def face_corners(index: int, side: float) -> np.ndarray:
    """Die-local 3-D corners of a face, in texture order: top-left, top-right, bottom-right, bottom-left."""
    h = side / 2
    c = FACE_NORMALS[index] * h
    u, v = FACE_U[index] * h, FACE_V[index] * h
    return np.array([c - u + v, c + u + v, c + u - v, c - u - v])


def lowest_offset(rotation: np.ndarray, side: float, radius: float) -> float:
    """Height of the die centre above the floor when its lowest point touches the floor."""
    inner = cube_corners(side - 2 * radius) @ rotation.T
    return float(-inner[:, 2].min() + radius)


# Nothing nearer the lens than this (mm) is projected: see Camera.clip_near.
NEAR_MM = 1.0


def clip_polygon(points: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Sutherland-Hodgman: the part of polygon ``points`` (N,D) where the linear function whose values at
    the vertices are ``keep`` (N,) is >= 0. The result may be empty; it stays one polygon for a
    convex clip region (a half-space).

    >>> clip_polygon(np.array([[0.0, 0], [2, 0], [2, 2], [0, 2]]), np.array([1.0, -1, -1, 1])).tolist()
    [[0.0, 0.0], [1.0, 0.0], [1.0, 2.0], [0.0, 2.0]]
    """
    n = len(points)
    if n == 0 or np.all(keep >= 0):
        return points
    if np.all(keep < 0):
        return points[:0]
    out = []
    for i in range(n):
        j = (i + 1) % n
        a, b = keep[i], keep[j]
        if a >= 0:
            out.append(points[i])
        if (a >= 0) != (b >= 0):
            t = a / (a - b)
            out.append(points[i] + t * (points[j] - points[i]))
    return np.array(out)


def clip_to_box(points: np.ndarray, x0: float, y0: float, x1: float, y1: float) -> np.ndarray:
    """The part of an image polygon (N,2) inside the box, so that fixed-point drawing never overflows.

    >>> clip_to_box(np.array([[-5.0, 1], [5, 1], [5, 3]]), 0, 0, 10, 10).round(2).tolist()
    [[0.0, 1.0], [5.0, 1.0], [5.0, 3.0], [0.0, 2.0]]
    """
    for axis, lo, hi in ((0, x0, x1), (1, y0, y1)):
        points = clip_polygon(points, points[:, axis] - lo)
        if len(points):
            points = clip_polygon(points, hi - points[:, axis])
    return points


@dataclass(frozen=True)
class Camera:
    """A pinhole camera with radial (barrel) distortion looking down at the tray.

    ``rotation`` rows are the camera axes (x right, y down, z forward) in world coordinates;
    ``position`` is the optical centre in world millimetres.
    """

    width: int
    height: int
    focal: float
    cx: float
    cy: float
    rotation: np.ndarray
    position: np.ndarray
    k1: float = 0.0
    k2: float = 0.0

    @staticmethod
    def looking_at(width: int, height: int, hfov_deg: float, distance: float, tilt_deg: float,
                   heading_deg: float, target=(0.0, 0.0), k1: float = 0.0, k2: float = 0.0,
                   principal_offset=(0.0, 0.0)) -> "Camera":
        """A camera ``distance`` mm from ``target`` on the floor, tilted ``tilt_deg`` from straight down."""
        focal = (width / 2) / np.tan(np.radians(hfov_deg) / 2)
        # Straight down: x = world x, y = world -y, forward = world -z; then heading and tilt.
        base = np.array([[1, 0, 0], [0, -1, 0], [0, 0, -1]], dtype=np.float64)
        rot = rot_x(np.radians(tilt_deg)) @ base @ rot_z(-np.radians(heading_deg))
        forward = rot[2]
        position = np.array([target[0], target[1], 0.0]) - distance * forward
        return Camera(width, height, float(focal), width / 2 + principal_offset[0],
                      height / 2 + principal_offset[1], rot, position, k1, k2)

    def to_camera(self, points: np.ndarray) -> np.ndarray:
        return (np.asarray(points, dtype=np.float64) - self.position) @ self.rotation.T

    def project(self, points: np.ndarray) -> np.ndarray:
        """World points (N,3) to distorted pixel coordinates (N,2)."""
        pc = self.to_camera(points)
        z = np.maximum(pc[:, 2], 1e-6)
        x, y = pc[:, 0] / z, pc[:, 1] / z
        r2 = x * x + y * y
        # Past the radius where barrel distortion would fold back, keep the scale constant.
        if self.k1 < 0:
            r2 = np.minimum(r2, 0.9 / (3 * -self.k1))
        d = 1 + self.k1 * r2 + self.k2 * r2 * r2
        return np.stack([self.focal * x * d + self.cx, self.focal * y * d + self.cy], axis=1)

    def depth(self, points: np.ndarray) -> np.ndarray:
        return self.to_camera(points)[:, 2]

    def in_front(self, points: np.ndarray, near: float = NEAR_MM) -> bool:
        """True if every world point lies at least ``near`` mm in front of the lens (safe to project)."""
        return bool(np.all(self.depth(np.atleast_2d(points)) >= near))

    def clip_near(self, polygon: np.ndarray, near: float = NEAR_MM) -> np.ndarray:
        """The part of a planar world polygon (N,3) at least ``near`` mm in front of the lens.

        Points behind the lens have no image; projecting them anyway gives huge or mirrored pixel
        coordinates. Returns (M,3) world points (M may be 0) that are all safe to project.

        >>> cam = Camera.looking_at(100, 100, 60.0, 100.0, 0.0, 0.0)
        >>> square = np.array([[-10, -10, 0], [10, -10, 0], [10, 10, 150], [-10, 10, 150]], float)
        >>> clipped = cam.clip_near(square)
        >>> cam.in_front(clipped), len(clipped)
        (True, 4)
        """
        return clip_polygon(np.asarray(polygon, np.float64), self.depth(polygon) - near)

    def floor_point(self, u: float, v: float, z: float = 0.0) -> np.ndarray:
        """Where the (undistorted) ray through pixel (u, v) meets the plane at height z."""
        ray_cam = np.array([(u - self.cx) / self.focal, (v - self.cy) / self.focal, 1.0])
        ray = self.rotation.T @ ray_cam
        t = (z - self.position[2]) / ray[2]
        return self.position + t * ray

    def px_per_mm(self, point) -> float:
        """Image scale at a world point (pixels per millimetre, ignoring distortion)."""
        return float(self.focal / max(self.depth(np.atleast_2d(point))[0], 1e-6))

