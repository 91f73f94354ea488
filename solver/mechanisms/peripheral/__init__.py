"""The peripheral (androgynous, IDSS-class) docking mechanism: the second mechanism type (issue 26)."""
