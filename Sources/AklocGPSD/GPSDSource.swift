import CGPS
