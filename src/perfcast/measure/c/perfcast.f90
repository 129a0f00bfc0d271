! perfcast region instrumentation for Fortran, through ISO_C_BINDING (compile this module and
! perfcast.c along with the program; see perfcast.h for the output format):
!
!   use perfcast
!   call perfcast_region_begin("solve")
!   ...
!   call perfcast_region_end("solve")
!
! Names are passed by text (trailing blanks trimmed), so any character expression works.
! MPI programs using mpif.h or `use mpi` need nothing else: perfcast.c wraps mpi_finalize_ and
! aggregates over ranks there. With `use mpi_f08` (not wrapped) call perfcast_finalize() on every
! rank just before MPI_Finalize.
module perfcast
  use, intrinsic :: iso_c_binding, only: c_char, c_null_char
  implicit none
  private
  public :: perfcast_region_begin, perfcast_region_end, perfcast_finalize

  interface
    subroutine c_region_begin(name) bind(C, name="perfcast_region_begin_dynamic")
      import :: c_char
      character(kind=c_char), dimension(*), intent(in) :: name
    end subroutine c_region_begin

    subroutine c_region_end(name) bind(C, name="perfcast_region_end_dynamic")
      import :: c_char
      character(kind=c_char), dimension(*), intent(in) :: name
    end subroutine c_region_end

    subroutine perfcast_finalize() bind(C, name="perfcast_finalize")
    end subroutine perfcast_finalize
  end interface

contains

  subroutine perfcast_region_begin(name)
    character(len=*), intent(in) :: name
    call c_region_begin(trim(name)//c_null_char)
  end subroutine perfcast_region_begin

  subroutine perfcast_region_end(name)
    character(len=*), intent(in) :: name
    call c_region_end(trim(name)//c_null_char)
  end subroutine perfcast_region_end

end module perfcast
