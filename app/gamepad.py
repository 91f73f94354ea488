"""A gamepad as the operator's two hand controllers, read through SDL2's game-controller API (PySDL2 with its bundled
SDL library: the standard layout whatever the pad); plain Python, no Qt. Left stick: translation in/out and
left/right, triggers: up (right) and down (left); right stick: pitch and yaw, shoulders: roll; A (south): brakes."""
from __future__ import annotations

import warnings

AXIS_FULL = 32767.0
# (deflection index 0..5 = tx ty tz rx ry rz, SDL_CONTROLLER_AXIS_* name, sign); SDL's stick y axes point down
AXES = ((0, "LEFTY", -1.0), (1, "LEFTX", -1.0), (2, "TRIGGERRIGHT", 1.0), (2, "TRIGGERLEFT", -1.0),
        (4, "RIGHTY", -1.0), (5, "RIGHTX", -1.0))
BUTTONS = ((3, "RIGHTSHOULDER", 1.0), (3, "LEFTSHOULDER", -1.0))
BRAKES_BUTTON = "A"


def _sdl():
    """The sdl2 module with its game-controller subsystem started, or None (no PySDL2 or no SDL library here)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")          # ("Using SDL2 binaries from pysdl2-dll")
            import sdl2
    except Exception:                                # noqa: BLE001  (ImportError, or the library failed to load)
        return None
    if not sdl2.SDL_WasInit(sdl2.SDL_INIT_GAMECONTROLLER) and sdl2.SDL_InitSubSystem(sdl2.SDL_INIT_GAMECONTROLLER):
        return None
    return sdl2


class Gamepad:
    """The first game controller SDL finds; `poll()` gives its six deflections (-1..1, dead zone taken out) and
    whether the brakes button went down since the last poll."""

    def __init__(self, dead_zone: float):
        self.dead_zone = float(dead_zone)
        self.sdl = _sdl()
        self.pad = None
        self.name = ""
        self._brake_down = False
        self.open()

    @property
    def available(self) -> bool:
        """Whether SDL could be loaded at all (else the keyboard only)."""
        return self.sdl is not None

    @property
    def present(self) -> bool:
        return self.pad is not None

    def open(self) -> bool:
        """Open the first game controller (again after one was plugged in); True if there is one."""
        s = self.sdl
        if s is None:
            return False
        s.SDL_GameControllerUpdate()
        if self.pad is None:
            for i in range(s.SDL_NumJoysticks()):
                if s.SDL_IsGameController(i):
                    self.pad = s.SDL_GameControllerOpen(i)
                    self.name = (s.SDL_GameControllerName(self.pad) or b"gamepad").decode(errors="replace")
                    break
        return self.pad is not None

    def _axis(self, name: str) -> float:
        s = self.sdl
        v = max(-1.0, min(1.0, s.SDL_GameControllerGetAxis(self.pad, getattr(s, f"SDL_CONTROLLER_AXIS_{name}"))
                          / AXIS_FULL))
        if abs(v) <= self.dead_zone:
            return 0.0
        return (abs(v) - self.dead_zone) / (1.0 - self.dead_zone) * (1.0 if v > 0 else -1.0)

    def _button(self, name: str) -> bool:
        s = self.sdl
        return bool(s.SDL_GameControllerGetButton(self.pad, getattr(s, f"SDL_CONTROLLER_BUTTON_{name}")))

    def poll(self) -> tuple[list[float], bool]:
        """(deflections tx ty tz rx ry rz, brakes button pressed since the last poll); zeros without a gamepad."""
        d = [0.0] * 6
        if self.pad is None:
            return d, False
        self.sdl.SDL_GameControllerUpdate()
        for k, name, sign in AXES:
            d[k] += sign * self._axis(name)
        for k, name, sign in BUTTONS:
            d[k] += sign * self._button(name)
        down = self._button(BRAKES_BUTTON)
        pressed = down and not self._brake_down
        self._brake_down = down
        return [max(-1.0, min(1.0, x)) for x in d], pressed
