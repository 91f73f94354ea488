"""The engine core every mechanism type is assembled from (no mechanism names here; docs/architecture.md).

    free_body    the free rigid body: quaternion and rotation matrix, point position and velocity, a force at a point,
                 Newton-Euler with the gyroscopic term, quaternion rate and normalisation, kinetic energy and momenta
    bodies       rigid bodies and joints: a revolute (and sliding) joint tree's
                 kinematics, point Jacobians, momentum and its composite-rigid-body mass matrix (CRBA), Cholesky solve
    elements     force elements: piecewise-linear tables, spring/damper, end stops, hysteresis (elastic-slider),
                 the return-mapped slider of a Coulomb brake, a drive's PI rate servo (contact friction: solver.friction)
    integrator   RK4 stages and the per-contact substep count
    control      rate resolution: joint rates for a point's commanded velocity by damped least squares
    energy       energy bookkeeping: kinetic energy, the balance kinetic + stored + dissipated - work

All kernels are `@njit(cache=True)` pure functions over float64 arrays; a type's kernels call them, so numba compiles
into a run only what its type uses. The contact library is solver.contact; the one runner solver.simulate.
"""
